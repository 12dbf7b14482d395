//! Source hosting, CI and package registries: their documented token formats, one row each.

use super::{Check, Format};

pub(super) const FORMATS: &[Format] = &[
    Format {
        vendor: "github",
        kind: "token",
        doc: "",
        triggers: &["gh"],
        pattern: r"gh[pousr]_[A-Za-z0-9]{36,}",
        sample: "ghp_{b62:36}",
        near_miss: "ghp_{b62:20}",
        ..Format::ROW
    },
    Format {
        vendor: "github",
        kind: "fine-grained",
        doc: "",
        triggers: &["github_pat_"],
        pattern: r"github_pat_[A-Za-z0-9_]{82,}",
        sample: "github_pat_{b62:22}_{b62:59}",
        near_miss: "github_pat_is_a_prefix",
        ..Format::ROW
    },
    Format {
        vendor: "gitlab",
        kind: "token",
        doc: "",
        triggers: &["gl"],
        pattern: r"gl(?:pat|dt|rtr|rt|ptt|cbt|imt|agent|soat|ffct|oas|ft)-[A-Za-z0-9_\-]{20,}(?:\.[A-Za-z0-9_\-]+)*",
        sample: "glpat-{url:20}",
        near_miss: "glpat-short",
        ..Format::ROW
    },
    Format {
        vendor: "gitlab",
        kind: "runner-registration",
        doc: "",
        triggers: &["GR1348941"],
        pattern: r"GR1348941[A-Za-z0-9_\-]{20,}",
        sample: "GR1348941{url:20}",
        near_miss: "GR1348941 build",
        ..Format::ROW
    },
    Format {
        vendor: "bitbucket",
        kind: "app-password",
        doc: "",
        triggers: &["ATBB"],
        pattern: r"ATBB[A-Za-z0-9_=.\-]{24,}",
        sample: "ATBB{b62:32}",
        near_miss: "ATBB-x",
        ..Format::ROW
    },
    Format {
        vendor: "bitbucket",
        kind: "dc-token",
        doc: "",
        triggers: &["BBDC-"],
        pattern: r"BBDC-[A-Za-z0-9+/_=\-]{30,}",
        sample: "BBDC-{b64:44}",
        near_miss: "BBDC-1",
        ..Format::ROW
    },
    Format {
        vendor: "circleci",
        kind: "token",
        doc: "",
        triggers: &["CCIPAT_", "CCIPRJ_"],
        pattern: r"CCIP(?:AT|RJ)_[A-Za-z0-9_]{20,}",
        sample: "CCIPAT_{b62:22}_{hex:40}",
        near_miss: "CCIPAT_x",
        ..Format::ROW
    },
    Format {
        vendor: "buildkite",
        kind: "token",
        doc: "",
        triggers: &["bkua_"],
        pattern: r"bkua_[a-f0-9]{40}",
        sample: "bkua_{hex:40}",
        near_miss: "bkua_{low:40}",
        ..Format::ROW
    },
    Format {
        vendor: "sonarqube",
        kind: "token",
        doc: "",
        triggers: &["squ_", "sqp_", "sqa_"],
        pattern: r"sq[upa]_[a-f0-9]{40}",
        sample: "squ_{hex:40}",
        near_miss: "squ_notes",
        ..Format::ROW
    },
    Format {
        vendor: "sourcegraph",
        kind: "token",
        doc: "",
        triggers: &["sgp_"],
        pattern: r"sgp_(?:[a-fA-F0-9]{16}_|local_)?[a-fA-F0-9]{40}",
        sample: "sgp_{hex:16}_{hex:40}",
        near_miss: "sgp_local",
        ..Format::ROW
    },
    Format {
        vendor: "atlassian",
        kind: "token",
        doc: "",
        triggers: &["ATATT3"],
        pattern: r"ATATT3[A-Za-z0-9_\-=]{50,}",
        sample: "ATATT3{url:180}",
        near_miss: "ATATT3x",
        ..Format::ROW
    },
    Format {
        vendor: "atlassian",
        kind: "cookie-token",
        doc: "",
        triggers: &["ATCTT3"],
        pattern: r"ATCTT3[A-Za-z0-9_\-=]{50,}",
        sample: "ATCTT3{url:180}",
        near_miss: "ATCTT3x",
        ..Format::ROW
    },
    Format {
        vendor: "harness",
        kind: "token",
        doc: "",
        triggers: &["pat", "sat."],
        pattern: r"[ps]at\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}",
        sample: "pat.{url:22}.{b62:24}.{b62:20}",
        near_miss: "pat.example.com",
        ..Format::ROW
    },
    Format {
        vendor: "npm",
        kind: "token",
        doc: "",
        triggers: &["npm_"],
        pattern: r"npm_[A-Za-z0-9]{36,}",
        sample: "npm_{b62:36}",
        near_miss: "npm_config_cache",
        ..Format::ROW
    },
    Format {
        vendor: "pypi",
        kind: "token",
        doc: "",
        triggers: &["pypi-"],
        pattern: r"pypi-AgE(?:IcHlwaS5vcmc|NdGVzdC5weXBpLm9yZw)[A-Za-z0-9_\-]{40,}",
        sample: "pypi-AgEIcHlwaS5vcmc{url:150}",
        near_miss: "pypi-x",
        ..Format::ROW
    },
    Format {
        vendor: "dockerhub",
        kind: "token",
        doc: "",
        triggers: &["dckr_"],
        pattern: r"dckr_(?:pat|oat)_[A-Za-z0-9_\-]{20,}",
        sample: "dckr_pat_{url:27}",
        near_miss: "dckr_pat_",
        ..Format::ROW
    },
    Format {
        vendor: "rubygems",
        kind: "token",
        doc: "",
        triggers: &["rubygems_"],
        pattern: r"rubygems_[a-f0-9]{48}",
        sample: "rubygems_{hex:48}",
        near_miss: "rubygems_x",
        ..Format::ROW
    },
    Format {
        vendor: "clojars",
        kind: "token",
        doc: "",
        triggers: &["CLOJARS_"],
        pattern: r"CLOJARS_[A-Za-z0-9]{60}",
        sample: "CLOJARS_{an:60}",
        near_miss: "CLOJARS_REPO",
        ..Format::ROW
    },
    Format {
        vendor: "nuget",
        kind: "key",
        doc: "",
        triggers: &["oy2"],
        pattern: r"oy2[a-z0-9]{43}\b",
        sample: "oy2{an:43}",
        near_miss: "oy2x",
        ..Format::ROW
    },
    Format {
        vendor: "crates",
        kind: "io-token",
        doc: "",
        triggers: &["cio"],
        pattern: r"cio[A-Za-z0-9]{32}\b",
        check: Check::Mixed,
        sample: "cio{b62:31}1",
        near_miss: "cio{low:32}",
        ..Format::ROW
    },
    Format {
        vendor: "artifactory",
        kind: "key",
        doc: "",
        triggers: &["AKCp"],
        pattern: r"AKCp[A-Za-z0-9]{64,}",
        sample: "AKCp{b62:69}",
        near_miss: "AKCp",
        ..Format::ROW
    },
    Format {
        vendor: "artifactory",
        kind: "reference-token",
        doc: "",
        triggers: &["cmVmdGtu"],
        pattern: r"cmVmdGtu[A-Za-z0-9]{56}\b",
        sample: "cmVmdGtu{b62:56}",
        near_miss: "cmVmdGtu",
        ..Format::ROW
    },
    Format {
        vendor: "readme",
        kind: "key",
        doc: "",
        triggers: &["rdme_"],
        pattern: r"rdme_[a-z0-9]{70}",
        sample: "rdme_{an:70}",
        near_miss: "rdme_x",
        ..Format::ROW
    },
];
