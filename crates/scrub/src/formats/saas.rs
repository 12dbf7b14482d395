//! Business software: productivity, CRM, maps, social: their documented token formats, one row each.

use super::Format;

pub(super) const FORMATS: &[Format] = &[
    Format {
        vendor: "linear",
        kind: "key",
        doc: "",
        triggers: &["lin_api_", "lin_oauth_"],
        pattern: r"lin_(?:api|oauth)_[A-Za-z0-9]{32,}",
        sample: "lin_api_{b62:40}",
        near_miss: "lin_api_",
        ..Format::ROW
    },
    Format {
        vendor: "notion",
        kind: "token",
        doc: "",
        triggers: &["ntn_"],
        pattern: r"ntn_[0-9]{11}[A-Za-z0-9]{35}",
        sample: "ntn_{dig:11}{b62:35}",
        near_miss: "ntn_",
        ..Format::ROW
    },
    Format {
        vendor: "notion",
        kind: "legacy-token",
        doc: "",
        triggers: &["secret_"],
        pattern: r"secret_[A-Za-z0-9]{43}\b",
        sample: "secret_{b62:43}",
        near_miss: "secret_key",
        ..Format::ROW
    },
    Format {
        vendor: "figma",
        kind: "token",
        doc: "",
        triggers: &["figd_"],
        pattern: r"figd_[A-Za-z0-9_\-]{40,}",
        sample: "figd_{url:40}",
        near_miss: "figd_",
        ..Format::ROW
    },
    Format {
        vendor: "airtable",
        kind: "token",
        doc: "",
        triggers: &["pat"],
        pattern: r"pat[A-Za-z0-9]{14}\.[a-f0-9]{64}",
        sample: "pat{b62:14}.{hex:64}",
        near_miss: "patch",
        ..Format::ROW
    },
    Format {
        vendor: "hubspot",
        kind: "token",
        doc: "",
        triggers: &["pat"],
        pattern: concat!(r"pat-(?:na|eu|ap)[0-9]-", uuid!()),
        sample: "pat-na1-{uuid}",
        near_miss: "pat-na1-x",
        ..Format::ROW
    },
    Format {
        vendor: "contentful",
        kind: "token",
        doc: "",
        triggers: &["CFPAT-"],
        pattern: r"CFPAT-[A-Za-z0-9_\-]{40,}",
        sample: "CFPAT-{url:43}",
        near_miss: "CFPAT-",
        ..Format::ROW
    },
    Format {
        vendor: "octopus",
        kind: "key",
        doc: "",
        triggers: &["API-"],
        pattern: r"API-[A-Z0-9]{26}\b",
        sample: "API-{un:26}",
        near_miss: "API-GATEWAY",
        ..Format::ROW
    },
    Format {
        vendor: "launchdarkly",
        kind: "key",
        doc: "",
        triggers: &["api-", "sdk-", "mob-"],
        pattern: concat!(r"(?:api|sdk|mob)-", uuid!()),
        sample: "sdk-{uuid}",
        near_miss: "sdk-version",
        ..Format::ROW
    },
    Format {
        vendor: "adobe",
        kind: "secret",
        doc: "",
        triggers: &["p8e-"],
        pattern: r"p8e-[A-Za-z0-9]{32}\b",
        sample: "p8e-{b62:32}",
        near_miss: "p8e-x",
        ..Format::ROW
    },
    Format {
        vendor: "easypost",
        kind: "key",
        doc: "",
        triggers: &["EZAK", "EZTK"],
        pattern: r"EZ[AT]K[A-Za-z0-9]{54}\b",
        sample: "EZAK{b62:54}",
        near_miss: "EZAK",
        ..Format::ROW
    },
    Format {
        vendor: "duffel",
        kind: "token",
        doc: "",
        triggers: &["duffel_"],
        pattern: r"duffel_(?:test|live)_[A-Za-z0-9_=\-]{43}",
        sample: "duffel_test_{url:43}",
        near_miss: "duffel_test_",
        ..Format::ROW
    },
    Format {
        vendor: "intra42",
        kind: "secret",
        doc: "",
        triggers: &["s-s4t2"],
        pattern: r"s-s4t2(?:ud|af)-[a-f0-9]{64}",
        sample: "s-s4t2ud-{hex:64}",
        near_miss: "s-s4t2ud-",
        ..Format::ROW
    },
    Format {
        vendor: "settlemint",
        kind: "token",
        doc: "",
        triggers: &["sm_"],
        pattern: r"sm_(?:aat|pat|sat)_[A-Za-z0-9]{16}\b",
        sample: "sm_pat_{b62:16}",
        near_miss: "sm_pat_",
        ..Format::ROW
    },
    Format {
        vendor: "zoho",
        kind: "token",
        doc: "",
        triggers: &["1000."],
        pattern: r"1000\.[a-f0-9]{32}\.[a-f0-9]{32}",
        sample: "1000.{hex:32}.{hex:32}",
        near_miss: "1000.5",
        ..Format::ROW
    },
    Format {
        vendor: "salesforce",
        kind: "session",
        doc: "",
        triggers: &["00D"],
        pattern: r"00D[A-Za-z0-9]{12,15}![A-Za-z0-9_.]{80,}",
        sample: "00D{b62:15}!{b62:96}",
        near_miss: "00D",
        ..Format::ROW
    },
    Format {
        vendor: "dropbox",
        kind: "token",
        doc: "",
        triggers: &["sl."],
        pattern: r"sl\.[A-Za-z0-9_.\-]{130,}",
        sample: "sl.{url:140}",
        near_miss: "sl.no",
        ..Format::ROW
    },
    Format {
        vendor: "instagram",
        kind: "token",
        doc: "",
        triggers: &["IGQV"],
        pattern: r"IGQV[A-Za-z0-9_\-]{100,}",
        sample: "IGQV{url:140}",
        near_miss: "IGQV",
        ..Format::ROW
    },
    Format {
        vendor: "facebook",
        kind: "token",
        doc: "",
        triggers: &["EAAC", "EAAM"],
        pattern: r"EAA[CM][A-Za-z0-9]{100,}",
        sample: "EAAC{b62:120}",
        near_miss: "EAAC",
        ..Format::ROW
    },
    Format {
        vendor: "mapbox",
        kind: "token",
        doc: "",
        triggers: &["pk.", "sk.", "tk."],
        pattern: r"[pst]k\.eyJ[A-Za-z0-9_\-]{20,}\.[A-Za-z0-9_\-]{20,}",
        sample: "pk.eyJ{url:60}.{url:22}",
        near_miss: "pk.eyJ",
        ..Format::ROW
    },
    Format {
        vendor: "facebook-app",
        kind: "token",
        doc: "",
        pattern: r"\b[0-9]{15,16}(?:\||%7[Cc])[A-Za-z0-9_\-]{27,40}",
        sample: "{dig:15}|{url:27}",
        near_miss: "123|abc",
        ..Format::ROW
    },
    Format {
        vendor: "asana",
        kind: "token",
        doc: "",
        pattern: r"\b[12]/[0-9]{10,19}(?:/[0-9]+)?:[a-f0-9]{32}\b",
        sample: "1/{dig:16}:{hex:32}",
        near_miss: "1/2:3",
        ..Format::ROW
    },
    Format {
        vendor: "maxmind",
        kind: "token",
        doc: "",
        pattern: r"\b[A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk\b",
        sample: "{b62:6}_{b62:29}_mmk",
        near_miss: "a_b_mmk",
        ..Format::ROW
    },
];
