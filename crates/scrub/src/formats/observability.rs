//! Monitoring, error tracking and API tools: their documented token formats, one row each.

use super::Format;

pub(super) const FORMATS: &[Format] = &[
    Format {
        vendor: "grafana",
        kind: "token",
        doc: "",
        triggers: &["gl"],
        pattern: r"gl(?:sa|c)_[A-Za-z0-9_+/]{32,}={0,2}",
        sample: "glsa_{b62:32}_{hex:8}",
        near_miss: "glsa_x",
        ..Format::ROW
    },
    Format {
        vendor: "dynatrace",
        kind: "token",
        doc: "",
        triggers: &["dt0c01."],
        pattern: r"dt0c01\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}",
        sample: "dt0c01.{un:24}.{un:64}",
        near_miss: "dt0c01.x",
        ..Format::ROW
    },
    Format {
        vendor: "new",
        kind: "relic-key",
        doc: "",
        triggers: &["NRII-", "NRAK-", "NRJS-", "NRAA-"],
        pattern: r"NR(?:II|AK|JS|AA)-[A-Za-z0-9\-]{19,}",
        sample: "NRAK-{un:27}",
        near_miss: "NRAK-",
        ..Format::ROW
    },
    Format {
        vendor: "sentry",
        kind: "token",
        doc: "",
        triggers: &["sntrys_", "sntryu_"],
        pattern: r"sntry[su]_[A-Za-z0-9_+/=\-]{40,}",
        sample: "sntryu_{hex:64}",
        near_miss: "sntryu_",
        ..Format::ROW
    },
    Format {
        vendor: "posthog",
        kind: "personal-key",
        doc: "",
        triggers: &["phx_"],
        pattern: r"phx_[A-Za-z0-9]{40,}",
        sample: "phx_{b62:47}",
        near_miss: "phx_",
        ..Format::ROW
    },
    Format {
        vendor: "honeycomb",
        kind: "key",
        doc: "",
        triggers: &["hcaik_", "hcxik_", "hcxmk_"],
        pattern: r"hc(?:ai|xi|xm)k_[a-z0-9]{20,}",
        sample: "hcaik_{an:58}",
        near_miss: "hcaik_",
        ..Format::ROW
    },
    Format {
        vendor: "postman",
        kind: "key",
        doc: "",
        triggers: &["PMAK-"],
        pattern: r"PMAK-[A-Za-z0-9]{20,}-[A-Za-z0-9]{20,}",
        sample: "PMAK-{hex:24}-{hex:34}",
        near_miss: "PMAK-",
        ..Format::ROW
    },
];
