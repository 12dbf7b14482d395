//! `--header`: extra request headers sent with every ping (start, end and `check`), such as
//! the service token a self-hosted Healthchecks behind Cloudflare Access asks for.
//!
//! A value is a secret like the heartbeat URL: it is marked sensitive for the HTTP client
//! (so no debug output shows it), scrubbed from every summary and body, and never quoted in
//! an error. Nor is a name: `--header 'ghp_…:'` puts the token where the name goes. An
//! error names the option, which one (`--header #2`) or, for a file, the line, and only
//! words of crontap-run's own (a refused header's name, a scheme) from its lists. A value
//! on the command line can be read by every user of the host in `ps`, so `--header @PATH`
//! reads headers from a file instead, one per line: a file owned by root or this user and
//! writable by no one else, reached only through directories no other account can change
//! ([`files::read_secret`]), holding at most a few headers.

use std::path::Path;

use anyhow::{Result, bail};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};

use crate::files;
use crate::sanitize;

/// Largest header file read: a few headers are far smaller.
const MAX_FILE: u64 = 64 * 1024;

/// Values shorter than this are not scrubbed as secrets of their own: a header such as
/// `X-Env: prod` must not take the word out of every summary.
const MIN_SECRET_LEN: usize = 6;

/// Headers crontap-run sets itself, or that would change how the request is framed or its
/// body read: the target, the framing (`Expect: 100-continue` too), the body's type and
/// encoding, the connection.
const REFUSED: [&str; 12] = [
    "host",
    "expect",
    "content-length",
    "content-type",
    "content-encoding",
    "transfer-encoding",
    "trailer",
    "connection",
    "keep-alive",
    "proxy-connection",
    "upgrade",
    "te",
];

/// Authorization schemes, which alone are an `Authorization` value with its credentials
/// missing.
const SCHEMES: [&str; 4] = ["Basic", "Bearer", "Digest", "Token"];

/// Most headers a file may hold: a few credentials. A file with more is not a header file
/// (a password file has a `name:` line per account).
const MAX_FROM_FILE: usize = 16;

/// The extra headers of every ping, and their values as secrets to scrub.
#[derive(Clone, Default)]
pub struct Headers {
    pub map: HeaderMap,
    pub secrets: Vec<String>,
}

impl std::fmt::Debug for Headers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.map.keys().map(HeaderName::as_str).collect();
        write!(f, "Headers({names:?})")
    }
}

impl Headers {
    /// Parses every `--header` given: `Name: value`, or `@PATH` for a file of them.
    pub fn parse(given: &[String]) -> Result<Headers> {
        let mut headers = Headers::default();
        for (number, arg) in given.iter().enumerate() {
            match arg.strip_prefix('@') {
                Some(path) => headers.read_file(Path::new(path))?,
                None if given.len() == 1 => headers.add(arg, "--header")?,
                None => headers.add(arg, &format!("--header #{}", number + 1))?,
            }
        }
        Ok(headers)
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Adds the headers of a file: one `Name: value` a line; blank lines and lines starting
    /// with `#` are skipped. A file that holds none is refused, as a mistake.
    fn read_file(&mut self, path: &Path) -> Result<()> {
        let source = format!("--header @{}", sanitize::path(path));
        let text = files::read_secret(path, MAX_FILE)
            .map_err(|e| anyhow::anyhow!("{source}: cannot read the file ({e:#})"))?;
        let Ok(text) = String::from_utf8(text) else {
            bail!("{source}: the file is not valid UTF-8");
        };
        let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
        let before = self.map.len();
        for (number, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            self.add(line, &format!("{source}, line {}", number + 1))?;
        }
        if self.map.len() == before {
            bail!("{source}: the file holds no header (expected `Name: value` lines)");
        }
        if self.map.len() - before > MAX_FROM_FILE {
            bail!("{source}: more than {MAX_FROM_FILE} headers; is it the right file?");
        }
        Ok(())
    }

    /// Adds one `Name: value`; errors name `source`, never the name or the value.
    fn add(&mut self, text: &str, source: &str) -> Result<()> {
        let Some((name, value)) = text.split_once(':') else {
            bail!("{source} must be `Name: value` (no `:` found)");
        };
        let name = name.trim();
        // Not quoted: text that is no name may be a value with the `:` in the wrong place
        // (`X-Key=s3cret:x`, `Authorization Basic user:password`).
        let Ok(header) = HeaderName::from_bytes(name.as_bytes()) else {
            bail!(
                "{source}: the text before the first `:` is not a header name (letters, \
                 digits and !#$%&'*+-.^_`|~, no spaces)"
            );
        };
        // Named from the list, not as given.
        if let Some(refused) = REFUSED.iter().find(|r| **r == header.as_str()) {
            bail!("{source}: {refused} is set by crontap-run itself and cannot be given");
        }
        let value = value.trim_matches([' ', '\t']);
        if value.is_empty() {
            bail!("{source}: the header has an empty value (or is a value with a `:` at its end)");
        }
        // `Authorization: Bearer $TOKEN` with the variable empty: the scheme alone.
        let credentials = ["authorization", "proxy-authorization"]
            .into_iter()
            .find(|c| *c == header.as_str());
        let scheme = SCHEMES.iter().find(|s| s.eq_ignore_ascii_case(value));
        if let (Some(credentials), Some(scheme)) = (credentials, scheme) {
            bail!(
                "{source}: {credentials} names the scheme {scheme} but no credentials (an empty \
                 variable?)"
            );
        }
        // Visible ASCII, spaces and tabs only: a line break would start a header of its own.
        let parsed = HeaderValue::from_str(value)
            .ok()
            .filter(|_| value.is_ascii());
        let Some(mut parsed) = parsed else {
            bail!(
                "{source}: the value holds a character a header cannot carry (control \
                 characters and non-ASCII are refused)"
            );
        };
        parsed.set_sensitive(true);
        self.map.append(header, parsed);
        self.secrets.extend(secrets_of(value));
        Ok(())
    }
}

/// The parts of a header value to scrub: the whole value and, for `<scheme> <credentials>`
/// (`Bearer abc…`, `Basic …`), the credentials without the scheme's word, which is no
/// secret and must not be taken out of every summary.
fn secrets_of(value: &str) -> Vec<String> {
    let mut out = vec![value.to_owned()];
    if let Some((scheme, rest)) = value.split_once(' ')
        && scheme.bytes().all(|b| b.is_ascii_alphabetic())
    {
        out.push(rest.trim().to_owned());
    }
    out.retain(|s| s.len() >= MIN_SECRET_LEN);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Headers, String> {
        let given: Vec<String> = args.iter().map(|s| (*s).to_owned()).collect();
        Headers::parse(&given).map_err(|e| format!("{e:#}"))
    }

    #[test]
    fn names_and_values() {
        let h = parse(&[
            "CF-Access-Client-Id: id-1234567",
            "X-Two:  b c  ",
            "x-two: d1",
        ])
        .unwrap();
        assert_eq!(h.map.get("cf-access-client-id").unwrap(), "id-1234567");
        let twos: Vec<_> = h.map.get_all("x-two").iter().collect();
        assert_eq!(twos, ["b c", "d1"]);
        assert!(h.map.values().all(HeaderValue::is_sensitive));
        assert!(!format!("{h:?}").contains("id-1234567"));
    }

    #[test]
    fn malformed_headers_name_the_option_never_the_value() {
        for bad in [
            "NoColon-s3cretvalue",
            "Bad Name: s3cretvalue",
            ": s3cretvalue",
            "X-Token: s3cret\u{7f}value",
            "X-Token: s3cretvalué",
            "X-Token:  ",
            "Host: s3cretvalue",
            "Content-Length: 5",
            "Content-Type: application/json",
            "Content-Encoding: gzip",
        ] {
            let err = parse(&[bad]).unwrap_err();
            assert!(err.starts_with("--header"), "{bad:?}: {err}");
            assert!(!err.contains("s3cret"), "{bad:?}: {err}");
            assert!(!err.contains('\n'), "{bad:?}: {err}");
        }
    }

    /// What stands where the name goes may be a token (`--header "$TOKEN:"`): no error
    /// quotes it, whatever is wrong with the header.
    #[test]
    fn errors_quote_no_name() {
        let name = "ghpSECRETVALUE123";
        for bad in [
            format!("{name}:"),
            format!("{name}:   "),
            format!("{name}: x\u{7f}y"),
            format!("{name}: valué"),
        ] {
            for given in [
                vec![bad.clone()],
                vec!["X-Ok: fine-1".to_owned(), bad.clone()],
            ] {
                let given: Vec<&str> = given.iter().map(String::as_str).collect();
                let err = parse(&given).unwrap_err();
                assert!(!err.contains("SECRET"), "{bad:?}: {err}");
                assert!(err.starts_with("--header"), "{bad:?}: {err}");
            }
        }
        let err = parse(&["X-Ok: fine-1", &format!("{name}:")]).unwrap_err();
        assert!(err.starts_with("--header #2: "), "{err}");
        let err = parse(&["AUTHORIZATION: bearer"]).unwrap_err();
        assert_eq!(
            err,
            "--header: authorization names the scheme Bearer but no credentials (an empty \
             variable?)"
        );
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("headers");
        std::fs::write(&path, format!("A-Id: one\n{name}:\n")).unwrap();
        let err = parse(&[&format!("@{}", path.display())]).unwrap_err();
        assert!(err.contains("line 2") && !err.contains("SECRET"), "{err}");
    }

    #[test]
    fn the_scheme_word_is_no_secret() {
        let h = parse(&["Authorization: Bearer tok-abcdef123", "X-Env: prod"]).unwrap();
        assert!(h.secrets.contains(&"tok-abcdef123".to_owned()));
        assert!(h.secrets.contains(&"Bearer tok-abcdef123".to_owned()));
        assert!(!h.secrets.iter().any(|s| s == "Bearer" || s == "prod"));
    }

    /// Written out here rather than taken from `REFUSED`, so that one dropped from there
    /// fails the test.
    #[test]
    fn framing_headers_are_refused() {
        for name in [
            "Host",
            "Expect",
            "Content-Length",
            "content-type",
            "Content-Encoding",
            "Transfer-Encoding",
            "Trailer",
            "Connection",
            "Keep-Alive",
            "Proxy-Connection",
            "Upgrade",
            "TE",
        ] {
            let err = parse(&[&format!("{name}: v-1234567")]).unwrap_err();
            assert!(err.contains("set by crontap-run itself"), "{name}: {err}");
            assert!(!err.contains("v-1234567"), "{err}");
        }
        assert!(parse(&["User-Agent: my-agent/1"]).is_ok());
    }

    #[test]
    fn header_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("headers");
        let at = format!("@{}", path.display());
        std::fs::write(
            &path,
            "\u{feff}# Cloudflare Access\n\nA-Id: one-1\r\nA-Secret: two-2\n",
        )
        .unwrap();
        let h = parse(&[&at]).unwrap();
        assert_eq!(h.map.len(), 2);
        assert_eq!(h.map.get("a-secret").unwrap(), "two-2");
        std::fs::write(&path, "A-Id: one\nbroken-s3cretvalue\n").unwrap();
        let err = parse(&[&at]).unwrap_err();
        assert!(err.contains("line 2") && !err.contains("s3cret"), "{err}");
        std::fs::write(&path, "# nothing\n").unwrap();
        assert!(parse(&[&at]).unwrap_err().contains("holds no header"));
        let many: String = (0..17)
            .map(|i| format!("user{i}: x:1000:0::/home:/bin/sh\n"))
            .collect();
        std::fs::write(&path, many).unwrap();
        assert!(parse(&[&at]).unwrap_err().contains("more than 16 headers"));
        std::fs::write(&path, "A-Id: one\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666)).unwrap();
        let err = parse(&[&at]).unwrap_err();
        assert!(err.contains("writable by group or others"), "{err}");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert!(parse(&[&at]).is_ok());
        let err = parse(&["@/nonexistent/headers"]).unwrap_err();
        assert!(
            err.starts_with("--header @/nonexistent/headers: cannot read"),
            "{err}"
        );
    }
}
