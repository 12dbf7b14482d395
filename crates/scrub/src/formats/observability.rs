//! Monitoring, error tracking and API tools: their documented token formats, one row each.
//!
//! Each row follows the vendor page in its `doc`; where that page leaves something open
//! the comment above the row says what was chosen and why.

use super::{Check, Format};

/// Honeycomb ingest key IDs start `hc[x]ik_`, where the page says the `[x]` letter varies
/// from key to key: every lower-case letter is a trigger.
const HONEYCOMB_INGEST: &[&str] = &[
    "hcaik_", "hcbik_", "hccik_", "hcdik_", "hceik_", "hcfik_", "hcgik_", "hchik_", "hciik_",
    "hcjik_", "hckik_", "hclik_", "hcmik_", "hcnik_", "hcoik_", "hcpik_", "hcqik_", "hcrik_",
    "hcsik_", "hctik_", "hcuik_", "hcvik_", "hcwik_", "hcxik_", "hcyik_", "hczik_",
];

pub(super) const FORMATS: &[Format] = &[
    // Dynatrace's token format: a prefix naming the type (`dt0s01`, `dt0c01`, ...), a dot,
    // a 24-character public part, a dot and a 64-character secret part; the example uses
    // upper-case letters and digits. The prefix and public part alone (the token
    // identifier) are safe to log, and are left.
    Format {
        vendor: "Dynatrace",
        kind: "access token",
        doc: "https://docs.dynatrace.com/docs/shortlink/api-authentication",
        triggers: &["dt0"],
        pattern: r"dt0[a-z][0-9]{2}\.[A-Z0-9]{24}\.[A-Z0-9]{64}\b",
        sample: "dt0s01.{un:24}.{un:64}",
        near_miss: "dt0c01.{un:24}",
        ..Format::ROW
    },
    // Honeycomb's authentication page: an ingest key is its key ID (`hcxik_` and 26
    // characters) and its secret (32 characters) written together, 58 characters after
    // the prefix in its example (all digits there; the IDs are lower case, so lower-case
    // letters are allowed too). The key ID alone is a label and is left.
    Format {
        vendor: "Honeycomb",
        kind: "ingest key",
        doc: "https://docs.honeycomb.io/api/authentication",
        triggers: HONEYCOMB_INGEST,
        pattern: r"hc[a-z]ik_[a-z0-9]{58}\b",
        sample: "hcxik_{an:58}",
        near_miss: "hcxik_{an:26}",
        ..Format::ROW
    },
    // Evidence, from Sentry's "Token and Credential Formats" page, whose table gives
    // "`sntryu_[a-f0-9]{64}` | Personal auth token": `sntryu_` and 64 lower-case hex
    // digits.
    // Provenance checked on 2026-12-05 with the docs search: the page's Formats table holds
    // that row word for word.
    Format {
        vendor: "Sentry",
        kind: "personal auth token",
        doc: "https://docs.sentry.io/security-legal-pii/security/token-formats/",
        triggers: &["sntryu_"],
        pattern: r"sntryu_[0-9a-f]{64}\b",
        sample: "sntryu_{hex:64}",
        near_miss: "sntryu_{hex:32}",
        ..Format::ROW
    },
    // Grafana's operator guide for service accounts (Grafana's own docs site) shows a token
    // the operator stores, base64 in a Secret; decoded it is
    // `glsa_FuyeHy7Wf4211lSHFJQy4Os9c2qmiFYV_bd9bc99`: `glsa_`, 32 letters and digits, `_` and
    // a short hex check (7 digits in the example; up to 8 allowed, in case a leading zero is
    // kept). Grafana's learning path shows the placeholder `glsa_xxxxxxxxxxxx`.
    Format {
        vendor: "Grafana",
        kind: "service account token",
        doc: "https://grafana.github.io/grafana-operator/docs/examples/serviceaccounts",
        triggers: &["glsa_"],
        pattern: r"glsa_[A-Za-z0-9]{32}_[0-9a-f]{1,8}\b",
        sample: "glsa_{b62:32}_{hex:7}",
        near_miss: "glsa_xxxxxxxxxxxx",
        ..Format::ROW
    },
    // New Relic's NerdGraph guide: the key NerdGraph reads from the `API-Key` header is "a
    // New Relic User key, a string that starts with NRAK-". The page shows only placeholders
    // (`NRAK-YOUR-USER-KEY`), so the body is taken as at least 20 letters and digits, a run no
    // such placeholder reaches.
    Format {
        vendor: "New Relic",
        kind: "user API key",
        doc: "https://newrelic.com/info/blog/decision-guide/fixing-a-nerdgraph-401-unauthorized-error-choosing-the-correct-new-relic-auth",
        triggers: &["NRAK-"],
        pattern: r"NRAK-[A-Za-z0-9]{20,}\b",
        sample: "NRAK-{un:30}",
        near_miss: "NRAK-YOUR-USER-KEY",
        ..Format::ROW
    },
    // PostHog's personal API keys page shows a key only masked, as `phx_***1234`. The body is
    // taken as at least 20 letters and digits, and must hold both. (Project API keys, `phc_`,
    // are meant to be public and are left.)
    Format {
        vendor: "PostHog",
        kind: "personal API key",
        doc: "https://posthog.com/docs/api/personal-api-keys",
        triggers: &["phx_"],
        pattern: r"phx_[A-Za-z0-9]{20,}\b",
        check: Check::Mixed,
        sample: "phx_{b62:40}",
        near_miss: "phx_***1234",
        ..Format::ROW
    },
];
