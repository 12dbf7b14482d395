//! AI model providers: their documented token formats, one row each.
//!
//! Every row follows the provider's own page in `doc`. Where the page gives only a prefix,
//! the body is bounded from below by a length no ordinary word reaches, and left open above
//! so that longer keys are still found.

use super::{Check, Format};

pub(super) const FORMATS: &[Format] = &[
    // The page: keys start with `sk-ant-`; the example is `sk-ant-api03-...` (a kind and a
    // two-digit version, then a dash). Claude Enterprise admin keys use `sk-ant-api01-`.
    Format {
        vendor: "Anthropic",
        kind: "API key",
        doc: "https://platform.claude.com/docs/en/get-api-key.md",
        triggers: &["sk-"],
        pattern: r"sk-ant-api[0-9]{2}-[A-Za-z0-9_\-]{32,}",
        sample: "sk-ant-api03-{url:80}",
        near_miss: "sk-ant-api03-your-key-here",
        ..Format::ROW
    },
    // The page: Console admin keys start with `sk-ant-admin01-`.
    Format {
        vendor: "Anthropic",
        kind: "Admin API key",
        doc: "https://platform.claude.com/docs/en/manage-claude/admin-api-keys",
        triggers: &["sk-"],
        pattern: r"sk-ant-admin[0-9]{2}-[A-Za-z0-9_\-]{32,}",
        sample: "sk-ant-admin01-{url:80}",
        near_miss: "sk-ant-admin01-...",
        ..Format::ROW
    },
    // OpenAI's own agent skill names project keys `sk-proj` keys; the body is not described.
    Format {
        vendor: "OpenAI",
        kind: "project API key",
        doc: "https://www.skills.sh/openai/openai-developers-for-cursor/openai-platform-api-key",
        triggers: &["sk-"],
        pattern: r"sk-proj-[A-Za-z0-9_\-]{40,}",
        sample: "sk-proj-{url:120}",
        near_miss: "sk-proj-key",
        ..Format::ROW
    },
    // The API reference shows an admin key value `sk-admin-1234abcd` (a placeholder) and a
    // redacted `sk-admin...def`.
    Format {
        vendor: "OpenAI",
        kind: "admin API key",
        doc: "https://developers.openai.com/api/reference/resources/organization/subresources/admin_api_keys/methods/create/index.md",
        triggers: &["sk-"],
        pattern: r"sk-admin-[A-Za-z0-9_\-]{20,}",
        check: Check::Mixed,
        sample: "sk-admin-{url:60}",
        near_miss: "sk-admin-1234abcd",
        ..Format::ROW
    },
    // Evidence, from the SDK reference for exchanging an auth code: the field `key`, "The
    // API key to use for OpenRouter requests", has the example
    // "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":
    // `sk-or-v1-` and 64 lower-case hex digits. The page gives this one example and no rule,
    // so the length and alphabet are the example's.
    // Provenance checked on 2026-12-05 with the docs search: the page (and its Python and
    // Go twins) holds the field's description and that example word for word. The
    // authentication guide (openrouter.ai/docs/guides/overview/auth/api-keys) adds only the
    // prefix: "OpenRouter treats a bearer that starts with sk-or-v1- as an API key."
    Format {
        vendor: "OpenRouter",
        kind: "API key",
        doc: "https://openrouter.ai/docs/client-sdks/typescript/models/operations/exchangeauthcodeforapikeyresponse",
        triggers: &["sk-"],
        pattern: r"sk-or-v1-[0-9a-f]{64}\b",
        sample: "sk-or-v1-{hex:64}",
        near_miss: "sk-or-v1-{hex:32}",
        ..Format::ROW
    },
    // The FAQ: the secret key is `sk-lf-...` (the public `pk-lf-` key is not a secret).
    Format {
        vendor: "Langfuse",
        kind: "secret key",
        doc: "https://langfuse.com/faq/all/lost-secret-key",
        triggers: &["sk-"],
        pattern: r"sk-lf-[A-Za-z0-9_\-]{20,}",
        sample: "sk-lf-{url:36}",
        near_miss: "sk-lf-secret",
        ..Format::ROW
    },
    // The page's example: `access_token = "hf_..."`. It gives the prefix only; the rest is
    // bounded from below at 30 letters and digits (so `hf_hub_download` and other names stay)
    // and must hold a letter and a digit.
    Format {
        vendor: "Hugging Face",
        kind: "user access token",
        doc: "https://huggingface.co/docs/hub/security-tokens",
        triggers: &["hf_"],
        pattern: r"hf_[A-Za-z0-9]{30,}",
        check: Check::Mixed,
        sample: "hf_{b62:34}",
        near_miss: "hf_transfer_enabled",
        ..Format::ROW
    },
    // The LLM Gateway's authentication page: LangSmith API keys start with `lsv2_`; a personal
    // access token is prefixed `lsv2_pt_` and a service key `lsv2_sk_`. No length is given;
    // the rest is bounded from below at 32 letters, digits and underscores.
    Format {
        vendor: "LangSmith",
        kind: "personal access token or service key",
        doc: "https://docs.langchain.com/langsmith/llm-gateway-authentication",
        triggers: &["lsv2_pt_", "lsv2_sk_"],
        pattern: r"lsv2_(?:pt|sk)_[A-Za-z0-9_]{32,}",
        sample: "lsv2_sk_{b62:40}",
        near_miss: "lsv2_pt_your_key",
        ..Format::ROW
    },
    // The page: 40-character strings that always start with `r8_`. It names no alphabet;
    // letters and digits are assumed, and the token must end there.
    Format {
        vendor: "Replicate",
        kind: "API token",
        doc: "https://replicate.com/docs/topics/security/api-tokens",
        triggers: &["r8_"],
        pattern: r"r8_[A-Za-z0-9]{37}\b",
        sample: "r8_{b62:37}",
        near_miss: "r8_{b62:20}",
        ..Format::ROW
    },
    // The admin API reference: new keys have the format `pckey_<public-label>_<unique-key>`.
    Format {
        vendor: "Pinecone",
        kind: "API key",
        doc: "https://docs.pinecone.io/reference/api/2025-04/admin/create_api_key",
        triggers: &["pckey_"],
        pattern: r"pckey_[A-Za-z0-9]+_[A-Za-z0-9]{20,}",
        sample: "pckey_{b62:5}_{b62:40}",
        near_miss: "pckey_<public-label>_<unique-key>",
        ..Format::ROW
    },
    // The page: keys from build.nvidia.com typically start with `nvapi-`.
    Format {
        vendor: "NVIDIA",
        kind: "API key",
        doc: "https://docs.nvidia.com/nemo/retriever/latest/extraction/api-keys/index.html",
        triggers: &["nvapi-"],
        pattern: r"nvapi-[A-Za-z0-9_\-]{32,}",
        sample: "nvapi-{url:64}",
        near_miss: "nvapi-key",
        ..Format::ROW
    },
    // The API reference authenticates with `Bearer tvly-YOUR_API_KEY`.
    Format {
        vendor: "Tavily",
        kind: "API key",
        doc: "https://docs.tavily.com/api-reference/introduction",
        triggers: &["tvly-"],
        pattern: r"tvly-[A-Za-z0-9_\-]{20,}",
        check: Check::Mixed,
        sample: "tvly-{url:32}",
        near_miss: "tvly-YOUR_API_KEY",
        ..Format::ROW
    },
    // The API reference's generated token: `pplx-1234567890abcdef` (16 letters and digits).
    Format {
        vendor: "Perplexity",
        kind: "API key",
        doc: "https://docs.perplexity.ai/api-reference/generate-auth-token-post",
        triggers: &["pplx-"],
        pattern: r"pplx-[A-Za-z0-9]{16,}",
        check: Check::Mixed,
        sample: "pplx-{b62:16}",
        near_miss: "pplx-integrationtests",
        ..Format::ROW
    },
];
