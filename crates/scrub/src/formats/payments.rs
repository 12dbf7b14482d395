//! Payments and commerce: their documented token formats, one row each.

use super::Format;

pub(super) const FORMATS: &[Format] = &[
    Format {
        vendor: "stripe",
        kind: "key",
        doc: "",
        triggers: &["sk_", "rk_", "pk_"],
        pattern: r"[srp]k_(?:live|test|prod)_[A-Za-z0-9]{16,}",
        sample: "sk_live_{b62:99}",
        near_miss: "sk_live_",
        ..Format::ROW
    },
    Format {
        vendor: "checkout",
        kind: "key",
        doc: "",
        triggers: &["sk_"],
        pattern: r"sk_sbox_[A-Za-z0-9_\-]{20,}",
        sample: "sk_sbox_{an:26}",
        near_miss: "sk_sbox_",
        ..Format::ROW
    },
    Format {
        vendor: "elevenlabs",
        kind: "key",
        doc: "",
        triggers: &["sk_"],
        pattern: r"sk_[a-f0-9]{48}\b",
        sample: "sk_{hex:48}",
        near_miss: "sk_{hex:40}",
        ..Format::ROW
    },
    Format {
        vendor: "clickup",
        kind: "token",
        doc: "",
        triggers: &["pk_"],
        pattern: r"pk_[0-9]{4,}_[A-Z0-9]{32}\b",
        sample: "pk_{dig:8}_{un:32}",
        near_miss: "pk_12_AB",
        ..Format::ROW
    },
    Format {
        vendor: "stripe",
        kind: "webhook-secret",
        doc: "",
        triggers: &["whsec_"],
        pattern: r"whsec_[A-Za-z0-9+/=]{24,}",
        sample: "whsec_{b62:32}",
        near_miss: "whsec_x",
        ..Format::ROW
    },
    Format {
        vendor: "square",
        kind: "token",
        doc: "",
        triggers: &["sq0atp-", "sq0csp-", "sq0idp-"],
        pattern: r"sq0(?:atp|csp|idp)-[A-Za-z0-9_\-]{22,}",
        sample: "sq0csp-{url:43}",
        near_miss: "sq0csp-short",
        ..Format::ROW
    },
    Format {
        vendor: "square",
        kind: "access-token",
        doc: "",
        triggers: &["EAAA"],
        pattern: r"EAAA[A-Za-z0-9_\-]{60,}",
        sample: "EAAA{url:60}",
        near_miss: "EAAAA",
        ..Format::ROW
    },
    Format {
        vendor: "shopify",
        kind: "token",
        doc: "",
        triggers: &["shpat_", "shpss_", "shpca_", "shppa_"],
        pattern: r"shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}",
        sample: "shpat_{hex:32}",
        near_miss: "shpat_{low:32}",
        ..Format::ROW
    },
    Format {
        vendor: "shippo",
        kind: "token",
        doc: "",
        triggers: &["shippo_"],
        pattern: r"shippo_(?:live|test)_[a-fA-F0-9]{40}",
        sample: "shippo_live_{hex:40}",
        near_miss: "shippo_live_x",
        ..Format::ROW
    },
    Format {
        vendor: "flutterwave",
        kind: "key",
        doc: "",
        triggers: &["FLWSECK", "FLWPUBK"],
        pattern: r"FLW(?:SECK|PUBK)(?:_TEST)?-[a-zA-Z0-9]{12,}(?:-X)?",
        sample: "FLWSECK_TEST-{hex:32}-X",
        near_miss: "FLWSECK",
        ..Format::ROW
    },
    Format {
        vendor: "razorpay",
        kind: "key",
        doc: "",
        triggers: &["rzp_"],
        pattern: r"rzp_(?:live|test)_[A-Za-z0-9]{14,}",
        sample: "rzp_live_{b62:14}",
        near_miss: "rzp_live_",
        ..Format::ROW
    },
    Format {
        vendor: "paddle",
        kind: "key",
        doc: "",
        triggers: &["pdl_"],
        pattern: r"pdl_(?:live|sdbx)_apikey_[A-Za-z0-9_]{20,}",
        sample: "pdl_live_apikey_{b62:40}",
        near_miss: "pdl_live_",
        ..Format::ROW
    },
    Format {
        vendor: "mercadopago",
        kind: "token",
        doc: "",
        triggers: &["APP_USR-"],
        pattern: r"APP_USR-[0-9]{10,}-[0-9]{6}-[a-f0-9]{32}-[0-9]{6,}",
        sample: "APP_USR-{dig:16}-{dig:6}-{hex:32}-{dig:9}",
        near_miss: "APP_USR-1",
        ..Format::ROW
    },
    Format {
        vendor: "woocommerce",
        kind: "key",
        doc: "",
        triggers: &["ck_", "cs_"],
        pattern: r"c[ks]_[a-f0-9]{40}\b",
        sample: "ck_{hex:40}",
        near_miss: "ck_editor_config",
        ..Format::ROW
    },
    Format {
        vendor: "braintree",
        kind: "token",
        doc: "",
        triggers: &["access_token$"],
        pattern: r"access_token\$(?:production|sandbox)\$[a-z0-9]{16}\$[a-f0-9]{32}",
        sample: "access_token$production${an:16}${hex:32}",
        near_miss: "access_token$x",
        ..Format::ROW
    },
    Format {
        vendor: "plaid",
        kind: "token",
        doc: "",
        triggers: &["access-"],
        pattern: concat!(r"access-(?:sandbox|development|production)-", uuid!()),
        sample: "access-sandbox-{uuid}",
        near_miss: "access-sandbox-x",
        ..Format::ROW
    },
];
