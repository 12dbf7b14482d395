//! AI model providers: their documented token formats, one row each.

use super::{Check, Format};

pub(super) const FORMATS: &[Format] = &[
    Format {
        vendor: "anthropic",
        kind: "key",
        doc: "",
        triggers: &["sk-"],
        pattern: r"sk-ant-[a-z]+[0-9]{2}-[A-Za-z0-9_\-]{20,}",
        sample: "sk-ant-api03-{url:93}AA",
        near_miss: "sk-ant-x",
        ..Format::ROW
    },
    Format {
        vendor: "openai",
        kind: "key",
        doc: "",
        triggers: &["sk-"],
        pattern: r"sk-(?:proj|svcacct|admin)-[A-Za-z0-9_\-]{20,}",
        sample: "sk-proj-{url:156}",
        near_miss: "sk-proj-x",
        ..Format::ROW
    },
    Format {
        vendor: "openai",
        kind: "key",
        doc: "",
        triggers: &["sk-"],
        pattern: r"sk-[A-Za-z0-9_\-]*T3BlbkFJ[A-Za-z0-9_\-]*",
        sample: "sk-proj-{url:156}",
        near_miss: "sk-proj-x",
        ..Format::ROW
    },
    Format {
        vendor: "openrouter",
        kind: "key",
        doc: "",
        triggers: &["sk-"],
        pattern: r"sk-or-v1-[a-f0-9]{64}",
        sample: "sk-or-v1-{hex:64}",
        near_miss: "sk-or-v1-x",
        ..Format::ROW
    },
    Format {
        vendor: "langfuse",
        kind: "key",
        doc: "",
        triggers: &["sk-", "pk-lf-"],
        pattern: r"[sp]k-lf-[A-Za-z0-9\-]{20,}",
        sample: "sk-lf-{uuid}",
        near_miss: "sk-lf-x",
        ..Format::ROW
    },
    Format {
        vendor: "sk",
        kind: "key",
        doc: "",
        triggers: &["sk-"],
        pattern: r"sk-[A-Za-z0-9]{32,}",
        sample: "sk-{b62:48}",
        near_miss: "sk-learn",
        ..Format::ROW
    },
    Format {
        vendor: "groq",
        kind: "key",
        doc: "",
        triggers: &["gsk_"],
        pattern: r"gsk_[A-Za-z0-9]{48,}",
        sample: "gsk_{b62:52}",
        near_miss: "gsk_x",
        ..Format::ROW
    },
    Format {
        vendor: "xai",
        kind: "key",
        doc: "",
        triggers: &["xai-"],
        pattern: r"xai-[A-Za-z0-9]{60,}",
        sample: "xai-{b62:80}",
        near_miss: "xai-grok",
        ..Format::ROW
    },
    Format {
        vendor: "replicate",
        kind: "token",
        doc: "",
        triggers: &["r8_"],
        pattern: r"r8_[A-Za-z0-9]{37}\b",
        sample: "r8_{b62:37}",
        near_miss: "r8_x",
        ..Format::ROW
    },
    Format {
        vendor: "pinecone",
        kind: "key",
        doc: "",
        triggers: &["pcsk_"],
        pattern: r"pcsk_[A-Za-z0-9_]{40,}",
        sample: "pcsk_{b62:5}_{b62:60}",
        near_miss: "pcsk_x",
        ..Format::ROW
    },
    Format {
        vendor: "nvidia",
        kind: "key",
        doc: "",
        triggers: &["nvapi-"],
        pattern: r"nvapi-[A-Za-z0-9_\-]{60,}",
        sample: "nvapi-{url:64}",
        near_miss: "nvapi-x",
        ..Format::ROW
    },
    Format {
        vendor: "tavily",
        kind: "key",
        doc: "",
        triggers: &["tvly-"],
        pattern: r"tvly-(?:dev-|prod-)?[A-Za-z0-9]{20,}",
        sample: "tvly-dev-{b62:32}",
        near_miss: "tvly-x",
        ..Format::ROW
    },
    Format {
        vendor: "langsmith",
        kind: "key",
        doc: "",
        triggers: &["lsv2_"],
        pattern: r"lsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}",
        sample: "lsv2_pt_{hex:32}_{hex:10}",
        near_miss: "lsv2_pt_x",
        ..Format::ROW
    },
    Format {
        vendor: "perplexity",
        kind: "key",
        doc: "",
        triggers: &["pplx-"],
        pattern: r"pplx-[A-Za-z0-9]{40,}",
        sample: "pplx-{b62:48}",
        near_miss: "pplx-x",
        ..Format::ROW
    },
    Format {
        vendor: "huggingface",
        kind: "token",
        doc: "",
        triggers: &["hf_", "api_org_"],
        pattern: r"(?:hf|api_org)_[A-Za-z0-9]{34,}",
        sample: "hf_{b62:34}",
        near_miss: "hf_hub_download",
        ..Format::ROW
    },
    Format {
        vendor: "fireworks",
        kind: "key",
        doc: "",
        triggers: &["fw_"],
        pattern: r"fw_[A-Za-z0-9]{24,}",
        check: Check::Mixed,
        sample: "fw_{b62:23}1",
        near_miss: "fw_{low:24}",
        ..Format::ROW
    },
    Format {
        vendor: "voyage",
        kind: "key",
        doc: "",
        triggers: &["pa-"],
        pattern: r"pa-[A-Za-z0-9_\-]{40,}",
        check: Check::Mixed,
        sample: "pa-{url:42}1",
        near_miss: "pa-{low:40}",
        ..Format::ROW
    },
];
