//! Business software: productivity, CRM, maps, travel, identity: their documented token
//! formats, one row each.
//!
//! Every row follows the vendor's own page in `doc`. Where the page gives only a prefix, the
//! body is bounded from below by a length no ordinary word reaches, and left open above.

use super::Format;

pub(super) const FORMATS: &[Format] = &[
    // The Tokens API page: a token is a JWT-like string of three dot-separated parts, the
    // first `pk` (public), `sk` (secret) or `tk` (temporary), then a base64url JSON payload
    // and a signature. Public tokens are meant to be exposed, so only `sk` and `tk` are
    // secrets here.
    Format {
        vendor: "Mapbox",
        kind: "secret or temporary access token",
        doc: "https://docs.mapbox.com/api/ja/accounts/tokens",
        triggers: &["sk.", "tk."],
        pattern: r"(?:sk|tk)\.eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}",
        sample: "sk.eyJ{url:60}.{url:22}",
        near_miss: "pk.eyJ{url:60}.{url:22}",
        ..Format::ROW
    },
    // Dropbox's API support team on its own forum: short-lived access tokens can be told
    // by their `sl.` prefix (long-lived ones have none, so they are not a format here).
    Format {
        vendor: "Dropbox",
        kind: "short-lived access token",
        doc: "https://dropboxforum.com/discussions/101000014/access-token/544001/replies/544017",
        triggers: &["sl."],
        pattern: r"sl\.[A-Za-z0-9_\-]{40,}",
        sample: "sl.{url:100}",
        near_miss: "sl.{low:8}.com",
        ..Format::ROW
    },
    // The OAuth guide's masked refresh token: `1000.`, lower-case hex, `.`, lower-case hex.
    // The mask does not keep the lengths, so each part is only bounded from below. The
    // client ID (`1000.` and upper-case letters and digits) is not a secret.
    Format {
        vendor: "Zoho",
        kind: "OAuth refresh token",
        doc: "https://www.zoho.com/backstage/api/v3/generate-access-token-from-refresh-token.html",
        triggers: &["1000."],
        pattern: r"1000\.[0-9a-f]{24,}\.[0-9a-f]{24,}",
        sample: "1000.{hex:32}.{hex:32}",
        near_miss: "1000.0SRS{un:20}239V",
        ..Format::ROW
    },
    // The release note: new license keys are 40 characters of `[a-zA-Z0-9_]` ending in
    // `_mmk`, and may grow longer. There is no literal start, so this row has no trigger.
    Format {
        vendor: "MaxMind",
        kind: "license key",
        doc: "https://dev.maxmind.com/geoip/release-notes/2023-03-16-changes-to-maxmind-license-keys/",
        pattern: r"\b[A-Za-z0-9_]{36,}_mmk\b",
        sample: "{b62:36}_mmk",
        near_miss: "geoip_{b62:20}_mmk",
        ..Format::ROW
    },
    // The Salesforce CLI reference: an access token is `"<org id>!<accesstoken>"`, as in
    // `export SFDX_ACCESS_TOKEN=00Dxx0000000000!xxxxx`, a 15-character organization ID starting
    // `00D`, `!`, and the token. The page does not spell the token's alphabet: letters, digits,
    // dots and underscores are taken, at least 20 of them, so the page's own `xxxxx` stays.
    Format {
        vendor: "Salesforce",
        kind: "access token (session ID)",
        doc: "https://developer.salesforce.com/docs/atlas.en-us.234.0.sfdx_cli_reference.meta/sfdx_cli_reference/cli_reference_auth_accesstoken.htm",
        triggers: &["00D"],
        pattern: r"00D[A-Za-z0-9]{12}![A-Za-z0-9._]{20,}",
        sample: "00D{b62:12}!{b62:96}",
        near_miss: "00Dxx0000000000!xxxxx",
        ..Format::ROW
    },
    // The test-mode page: testing access tokens start with `duffel_test_`. Live tokens are
    // not described there.
    Format {
        vendor: "Duffel",
        kind: "test access token",
        doc: "https://duffel.com/docs/api/overview/test-mode",
        triggers: &["duffel_"],
        pattern: r"duffel_test_[A-Za-z0-9_\-]{20,}",
        sample: "duffel_test_{url:43}",
        near_miss: "duffel_test_mode",
        ..Format::ROW
    },
    // The API guide: API tokens go in `Authorization: SSWS 00QCjAl4MlV-WPXM...0HmjFx-vbGua`,
    // so a token starts with `00` and holds letters, digits and dashes. The scheme name is
    // kept in front of the secret.
    Format {
        vendor: "Okta",
        kind: "API token",
        doc: "https://developer.okta.com/docs/api/openapi/okta-management/guides/overview",
        triggers: &["SSWS "],
        pattern: r"(SSWS )00[A-Za-z0-9_\-]{30,}",
        kept: "SSWS ",
        sample: "00{url:40}",
        near_miss: "SSWS 00QCjAl4MlV-WPXM...0HmjFx-vbGua",
        ..Format::ROW
    },
];
