//! Monitoring, error tracking and API tools: their documented token formats, one row each.
//!
//! Each row follows the vendor page in its `doc`; where that page leaves something open
//! the comment above the row says what was chosen and why.

use super::Format;

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
    // Sentry's token formats page: a personal auth token is `sntryu_` and 64 hex digits.
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
];
