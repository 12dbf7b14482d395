//! Tokens of a general format: their documented token formats, one row each.

use super::Format;

pub(super) const FORMATS: &[Format] = &[
    // RFC 7519: a JWT is a JSON object carried in the compact form of a JWS (three base64url
    // parts joined by dots: header, claims, signature) or of a JWE (five parts). Header and
    // claims are JSON objects, so their base64url text starts with `eyJ` (`{"`). An
    // unsecured JWT has an empty signature part.
    Format {
        vendor: "JSON Web Token",
        kind: "signed token (JWS form)",
        doc: "https://datatracker.ietf.org/doc/rfc7519/",
        triggers: &["eyJ"],
        pattern: r"eyJ[A-Za-z0-9_\-]{10,}\.eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]*",
        sample: "eyJ{url:30}.eyJ{url:80}.{url:43}",
        near_miss: "eyJ{url:40}",
        ..Format::ROW
    },
    // The JWE form: header, encrypted key (empty for direct encryption), initialisation
    // vector, ciphertext and authentication tag.
    Format {
        vendor: "JSON Web Token",
        kind: "encrypted token (JWE form)",
        doc: "https://datatracker.ietf.org/doc/rfc7519/",
        triggers: &["eyJ"],
        pattern: concat!(
            r"eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]*",
            r"\.[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}"
        ),
        sample: "eyJ{url:40}.{url:342}.{url:22}.{url:60}.{url:22}",
        near_miss: "eyJ{url:40}.{url:40}",
        ..Format::ROW
    },
];
