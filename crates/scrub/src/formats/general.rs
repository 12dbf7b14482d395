//! Tokens of a general format: their documented token formats, one row each.

use super::Format;

pub(super) const FORMATS: &[Format] = &[
    Format {
        vendor: "grafana",
        kind: "api-key",
        doc: "",
        triggers: &["eyJ"],
        pattern: r"eyJrIjoi[A-Za-z0-9]{60,}={0,3}",
        sample: "eyJrIjoi{b62:72}",
        near_miss: "eyJrIjoi",
        ..Format::ROW
    },
    Format {
        vendor: "jwt",
        kind: "jwt",
        doc: "",
        triggers: &["eyJ"],
        pattern: r"eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{4,}\.[A-Za-z0-9_\-]*",
        sample: "eyJ{url:30}.eyJ{url:80}.{url:43}",
        near_miss: "eyJ alone",
        ..Format::ROW
    },
    Format {
        vendor: "jwt",
        kind: "base64",
        doc: "",
        triggers: &["ZXlK"],
        pattern: r"ZXlK[A-Za-z0-9+/]{60,}={0,2}",
        sample: "ZXlK{b64:120}",
        near_miss: "ZXlK",
        ..Format::ROW
    },
];
