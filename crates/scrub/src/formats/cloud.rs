//! Clouds, hosting, infrastructure and secret managers: their documented token formats, one row each.

use super::{Check, Format};

pub(super) const FORMATS: &[Format] = &[
    Format {
        vendor: "aws",
        kind: "access-key-id",
        doc: "",
        triggers: &[
            "AKIA", "ASIA", "AGPA", "AIDA", "AROA", "ANPA", "ANVA", "AIPA", "ABIA", "A3T",
        ],
        pattern: r"(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA|ABIA|A3T[A-Z0-9])[A-Z0-9]{16}\b",
        sample: "AKIA{un:16}",
        near_miss: "AKIA{un:12}",
        ..Format::ROW
    },
    Format {
        vendor: "aws",
        kind: "access-key-id",
        doc: "",
        triggers: &["AC"],
        pattern: r"ACCA[A-Z0-9]{16}\b",
        sample: "AKIA{un:16}",
        near_miss: "AKIA{un:12}",
        ..Format::ROW
    },
    Format {
        vendor: "aws",
        kind: "session-token",
        doc: "",
        triggers: &["FwoGZXIvYXdz", "IQoJb3JpZ2lu"],
        pattern: r"(?:FwoGZXIvYXdz|IQoJb3JpZ2lu)[A-Za-z0-9/+]{100,}={0,2}",
        sample: "IQoJb3JpZ2lu{b64:300}",
        near_miss: "IQoJb3JpZ2lu",
        ..Format::ROW
    },
    Format {
        vendor: "aws",
        kind: "bedrock-key",
        doc: "",
        triggers: &["ABSK"],
        pattern: r"ABSK[A-Za-z0-9+/]{100,}={0,2}",
        sample: "ABSK{b64:130}",
        near_miss: "ABSK",
        ..Format::ROW
    },
    Format {
        vendor: "aws",
        kind: "bedrock-short-key",
        doc: "",
        triggers: &["bedrock-api-key-"],
        pattern: r"bedrock-api-key-[A-Za-z0-9+/=_\-]{40,}",
        sample: "bedrock-api-key-{b64:120}",
        near_miss: "bedrock-api-key-",
        ..Format::ROW
    },
    Format {
        vendor: "google",
        kind: "api-key",
        doc: "",
        triggers: &["AIza"],
        pattern: r"AIza[A-Za-z0-9_\-]{35,}",
        sample: "AIza{url:35}",
        near_miss: "AIza",
        ..Format::ROW
    },
    Format {
        vendor: "google",
        kind: "oauth-access",
        doc: "",
        triggers: &["ya29."],
        pattern: r"ya29\.[A-Za-z0-9_\-.]{20,}",
        sample: "ya29.{url:120}",
        near_miss: "ya29.x",
        ..Format::ROW
    },
    Format {
        vendor: "google",
        kind: "oauth-refresh",
        doc: "",
        triggers: &["1//0"],
        pattern: r"1//0[A-Za-z0-9_\-]{40,}",
        sample: "1//0{url:100}",
        near_miss: "1//0",
        ..Format::ROW
    },
    Format {
        vendor: "google",
        kind: "client-secret",
        doc: "",
        triggers: &["GOCSPX-"],
        pattern: r"GOCSPX-[A-Za-z0-9_\-]{20,}",
        sample: "GOCSPX-{url:28}",
        near_miss: "GOCSPX-",
        ..Format::ROW
    },
    Format {
        vendor: "google",
        kind: "hmac-key",
        doc: "",
        triggers: &["GOOG1"],
        pattern: r"GOOG1[A-Z0-9]{50,}",
        sample: "GOOG1{un:56}",
        near_miss: "GOOG1E",
        ..Format::ROW
    },
    Format {
        vendor: "azure",
        kind: "connection-key",
        doc: "",
        triggers: &["AccountKey=", "SharedAccessKey="],
        pattern: r"((?:AccountKey|SharedAccessKey)=)[A-Za-z0-9+/]{20,}={0,2}",
        kept: "AccountKey=",
        sample: "{b64:86}==",
        near_miss: "AccountKey=;",
        ..Format::ROW
    },
    Format {
        vendor: "alibaba",
        kind: "access-key-id",
        doc: "",
        triggers: &["LTAI"],
        pattern: r"LTAI[A-Za-z0-9]{12,20}\b",
        sample: "LTAI{b62:20}",
        near_miss: "LTAI",
        ..Format::ROW
    },
    Format {
        vendor: "tencent",
        kind: "secret-id",
        doc: "",
        triggers: &["AKID"],
        pattern: r"AKID[A-Za-z0-9]{32}\b",
        sample: "AKID{b62:32}",
        near_miss: "AKID",
        ..Format::ROW
    },
    Format {
        vendor: "volcengine",
        kind: "access-key",
        doc: "",
        triggers: &["AKLT"],
        pattern: r"AKLT[A-Za-z0-9_\-]{40,}",
        sample: "AKLT{url:44}",
        near_miss: "AKLT",
        ..Format::ROW
    },
    Format {
        vendor: "scaleway",
        kind: "access-key",
        doc: "",
        triggers: &["SCW"],
        pattern: r"SCW[A-Z0-9]{17}\b",
        check: Check::Mixed,
        sample: "SCW{un:17}",
        near_miss: "SCWABCDEFGHIJKLMNOPQ",
        ..Format::ROW
    },
    Format {
        vendor: "yandex",
        kind: "api-key",
        doc: "",
        triggers: &["AQVN"],
        pattern: r"AQVN[A-Za-z0-9_\-]{35,}",
        sample: "AQVN{url:36}",
        near_miss: "AQVN",
        ..Format::ROW
    },
    Format {
        vendor: "yandex",
        kind: "static-key",
        doc: "",
        triggers: &["YC"],
        pattern: r"YC[A-Za-z0-9_\-]{38,}",
        check: Check::Mixed,
        sample: "YC{url:38}",
        near_miss: "YC{low:38}",
        ..Format::ROW
    },
    Format {
        vendor: "yandex",
        kind: "iam-token",
        doc: "",
        triggers: &["t1."],
        pattern: r"t1\.[A-Za-z0-9_\-]+=*\.[A-Za-z0-9_\-]{80,}=*",
        sample: "t1.{url:40}.{url:86}",
        near_miss: "t1.micro",
        ..Format::ROW
    },
    Format {
        vendor: "digitalocean",
        kind: "token",
        doc: "",
        triggers: &["dop_v1_", "doo_v1_", "dor_v1_"],
        pattern: r"do[opr]_v1_[a-f0-9]{64}",
        sample: "dop_v1_{hex:64}",
        near_miss: "dop_v1_",
        ..Format::ROW
    },
    Format {
        vendor: "cloudflare",
        kind: "origin-ca-key",
        doc: "",
        triggers: &["v1.0-"],
        pattern: r"v1\.0-[a-f0-9]{24}-[a-f0-9]{146}",
        sample: "v1.0-{hex:24}-{hex:146}",
        near_miss: "v1.0-beta",
        ..Format::ROW
    },
    Format {
        vendor: "akamai",
        kind: "token",
        doc: "",
        triggers: &["akab-"],
        pattern: r"akab-[a-z0-9]{16}-[a-z0-9]{16}",
        sample: "akab-{an:16}-{an:16}",
        near_miss: "akab-x",
        ..Format::ROW
    },
    Format {
        vendor: "heroku",
        kind: "key",
        doc: "",
        triggers: &["HRKU-"],
        pattern: r"HRKU-[A-Za-z0-9_\-]{20,}",
        sample: "HRKU-AA{url:58}",
        near_miss: "HRKU-",
        ..Format::ROW
    },
    Format {
        vendor: "fly",
        kind: "token",
        doc: "",
        triggers: &["fo1_", "fm1a_", "fm1r_", "fm2_"],
        pattern: r"(?:fo1_[A-Za-z0-9_\-]{43}|fm(?:1[ar]|2)_[A-Za-z0-9+/]{100,}={0,3})",
        sample: "fo1_{url:43}",
        near_miss: "fo1_x",
        ..Format::ROW
    },
    Format {
        vendor: "render",
        kind: "key",
        doc: "",
        triggers: &["rnd_"],
        pattern: r"rnd_[A-Za-z0-9]{28,}",
        sample: "rnd_{b62:32}",
        near_miss: "rnd_x",
        ..Format::ROW
    },
    Format {
        vendor: "netlify",
        kind: "token",
        doc: "",
        triggers: &["nfp_"],
        pattern: r"nfp_[A-Za-z0-9]{36,}",
        sample: "nfp_{b62:40}",
        near_miss: "nfp_x",
        ..Format::ROW
    },
    Format {
        vendor: "supabase",
        kind: "token",
        doc: "",
        triggers: &["sbp_"],
        pattern: r"sbp_(?:oauth_)?[a-f0-9]{40}",
        sample: "sbp_{hex:40}",
        near_miss: "sbp_x",
        ..Format::ROW
    },
    Format {
        vendor: "supabase",
        kind: "secret",
        doc: "",
        triggers: &["sb_secret_"],
        pattern: r"sb_secret_[A-Za-z0-9_\-]{20,}",
        sample: "sb_secret_{url:31}",
        near_miss: "sb_secret_",
        ..Format::ROW
    },
    Format {
        vendor: "neon",
        kind: "key",
        doc: "",
        triggers: &["napi_"],
        pattern: r"napi_[a-z0-9]{60,}",
        sample: "napi_{an:64}",
        near_miss: "napi_x",
        ..Format::ROW
    },
    Format {
        vendor: "planetscale",
        kind: "token",
        doc: "",
        triggers: &["pscale_"],
        pattern: r"pscale_(?:tkn|oauth|pw)_[A-Za-z0-9_=.\-]{32,}",
        sample: "pscale_tkn_{url:43}",
        near_miss: "pscale_tkn_",
        ..Format::ROW
    },
    Format {
        vendor: "databricks",
        kind: "token",
        doc: "",
        triggers: &["dapi"],
        pattern: r"dapi[a-f0-9]{32}(?:-[0-9])?\b",
        sample: "dapi{hex:32}",
        near_miss: "dapi_client",
        ..Format::ROW
    },
    Format {
        vendor: "dbt",
        kind: "cloud-token",
        doc: "",
        triggers: &["dbtc_", "dbtu_"],
        pattern: r"dbt[cu]_[A-Za-z0-9_\-]{30,}",
        sample: "dbtc_{url:40}",
        near_miss: "dbtc_",
        ..Format::ROW
    },
    Format {
        vendor: "clickhouse",
        kind: "secret",
        doc: "",
        triggers: &["4b1d"],
        pattern: r"4b1d[A-Za-z0-9]{38}\b",
        sample: "4b1d{b62:38}",
        near_miss: "4b1d",
        ..Format::ROW
    },
    Format {
        vendor: "tailscale",
        kind: "key",
        doc: "",
        triggers: &["tskey-"],
        pattern: r"tskey-(?:api|auth|client|scim|webhook)-[A-Za-z0-9]+-[A-Za-z0-9]{16,}",
        sample: "tskey-auth-{b62:12}-{b62:32}",
        near_miss: "tskey-auth-",
        ..Format::ROW
    },
    Format {
        vendor: "openshift",
        kind: "token",
        doc: "",
        triggers: &["sha256~"],
        pattern: r"sha256~[A-Za-z0-9_\-]{43}",
        sample: "sha256~{url:43}",
        near_miss: "sha256~x",
        ..Format::ROW
    },
    Format {
        vendor: "pulumi",
        kind: "token",
        doc: "",
        triggers: &["pul-"],
        pattern: r"pul-[a-f0-9]{40}",
        sample: "pul-{hex:40}",
        near_miss: "pul-request",
        ..Format::ROW
    },
    Format {
        vendor: "prefect",
        kind: "key",
        doc: "",
        triggers: &["pnu_"],
        pattern: r"pnu_[A-Za-z0-9]{36}",
        sample: "pnu_{b62:36}",
        near_miss: "pnu_x",
        ..Format::ROW
    },
    Format {
        vendor: "doppler",
        kind: "token",
        doc: "",
        triggers: &["dp."],
        pattern: r"dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9_\-.]{20,}",
        sample: "dp.pt.{b62:43}",
        near_miss: "dp.pt.x",
        ..Format::ROW
    },
    Format {
        vendor: "vault",
        kind: "token",
        doc: "",
        triggers: &["hvs.", "hvb.", "hvr."],
        pattern: r"hv[sbr]\.[A-Za-z0-9_\-]{24,}",
        sample: "hvs.{url:90}",
        near_miss: "hvs.x",
        ..Format::ROW
    },
    Format {
        vendor: "vault",
        kind: "legacy-token",
        doc: "",
        triggers: &["s."],
        pattern: r"s\.[A-Za-z0-9]{24}\b",
        check: Check::Mixed,
        sample: "s.{b62:23}1",
        near_miss: "s.{low:24}",
        ..Format::ROW
    },
    Format {
        vendor: "onepassword",
        kind: "secret-key",
        doc: "",
        triggers: &["A3-"],
        pattern: r"A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}\b",
        sample: "A3-{un:6}-{un:11}-{un:5}-{un:5}-{un:5}",
        near_miss: "A3-PAPER-SIZE",
        ..Format::ROW
    },
    Format {
        vendor: "onepassword",
        kind: "service-token",
        doc: "",
        triggers: &["ops_"],
        pattern: r"ops_eyJ[A-Za-z0-9+/_\-]{100,}={0,3}",
        sample: "ops_eyJ{b64:250}",
        near_miss: "ops_eyJ",
        ..Format::ROW
    },
    Format {
        vendor: "age",
        kind: "secret-key",
        doc: "",
        triggers: &["AGE-SECRET-KEY-1"],
        pattern: r"AGE-SECRET-KEY-1[0-9A-Z]{50,}",
        sample: "AGE-SECRET-KEY-1{b32:58}",
        near_miss: "AGE-SECRET-KEY-1",
        ..Format::ROW
    },
    Format {
        vendor: "scalingo",
        kind: "token",
        doc: "",
        triggers: &["tk-us-"],
        pattern: r"tk-us-[A-Za-z0-9_\-]{48}",
        sample: "tk-us-{url:48}",
        near_miss: "tk-us-x",
        ..Format::ROW
    },
    Format {
        vendor: "infracost",
        kind: "token",
        doc: "",
        triggers: &["ico-"],
        pattern: r"ico-[A-Za-z0-9]{32}\b",
        sample: "ico-{b62:32}",
        near_miss: "ico-file",
        ..Format::ROW
    },
    Format {
        vendor: "frameio",
        kind: "token",
        doc: "",
        triggers: &["fio-u-"],
        pattern: r"fio-u-[A-Za-z0-9_=\-]{64}",
        sample: "fio-u-{url:64}",
        near_miss: "fio-u-x",
        ..Format::ROW
    },
    Format {
        vendor: "defined",
        kind: "networking-token",
        doc: "",
        triggers: &["dnkey-"],
        pattern: r"dnkey-[A-Za-z0-9_=\-]{26}-[A-Za-z0-9_=\-]{52}",
        sample: "dnkey-{url:26}-{url:52}",
        near_miss: "dnkey-x",
        ..Format::ROW
    },
    Format {
        vendor: "aws-secret",
        kind: "token",
        doc: "",
        pattern: r#"((?i:aws[_\-. ]?secret(?:[_\-. ]?access)?[_\-. ]?key|secret[_\-. ]?access[_\-. ]?key)["']?\s*(?:[:=]|=>)?\s*["']?)[A-Za-z0-9/+]{40,}"#,
        kept: "aws_secret_access_key = ",
        sample: "{b64:40}",
        near_miss: "aws_region = {low:40}",
        ..Format::ROW
    },
    Format {
        vendor: "azure-ad",
        kind: "token",
        doc: "",
        pattern: r"\b[A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.\-]{31,34}",
        sample: "{b62:3}8Q~{url:34}",
        near_miss: "8Q~",
        ..Format::ROW
    },
    Format {
        vendor: "terraform",
        kind: "token",
        doc: "",
        pattern: r"\b[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=\-]{60,}",
        sample: "{an:14}.atlasv1.{url:67}",
        near_miss: "x.atlasv1.y",
        ..Format::ROW
    },
];
