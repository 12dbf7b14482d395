//! The heartbeat URL: where it is read from, how it is validated, and the URLs built from it.
//!
//! The URL is a credential. [`HeartbeatUrl`] has no `Display`, its `Debug` shows only the
//! scheme and host, and errors about it name the source (file or variable), never the value.

use std::fmt;
use std::path::Path;

use anyhow::{Context, Result, bail};
use crontap_scrub::url_secrets;
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};
use reqwest::Url;

use crate::files;

/// Characters percent-encoded in the `msg` query value: everything but RFC 3986's unreserved.
const QUERY_VALUE: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// Largest URL file read; a URL is far shorter, anything bigger is a mistake.
pub(crate) const MAX_URL_FILE: u64 = 8 * 1024;

/// Parts of the URL shorter than this are not treated as secrets of their own (they would
/// redact ordinary words such as `ping`).
const MIN_SECRET_LEN: usize = 6;

/// Where the URL comes from, or why there is none.
pub enum Heartbeat {
    Configured(HeartbeatUrl),
    /// No URL configured; the text says which source was looked at.
    Missing(String),
}

#[derive(Clone)]
pub struct HeartbeatUrl {
    url: Url,
    /// The URL as configured, before normalisation (scheme case, default port …).
    raw: String,
}

impl Heartbeat {
    /// Reads the URL: the file wins over the environment variable. `env` looks variables up
    /// (the process environment in production, a map in tests). With `headers` to send,
    /// the URL file decides where their secrets go, so it must be as far out of other
    /// accounts' reach as a header file ([`files::read_secret`]).
    pub fn load(
        url_file: Option<&Path>,
        url_env: &str,
        headers: bool,
        env: impl Fn(&str) -> Option<std::ffi::OsString>,
    ) -> Result<Heartbeat> {
        if let Some(path) = url_file {
            let from_env = env(URL_FILE_VAR).is_some_and(|v| Path::new(&v) == path);
            let source = file_source("--url-file", URL_FILE_VAR, path, from_env);
            let text = match headers {
                true => files::read_secret(path, MAX_URL_FILE)
                    .with_context(|| {
                        format!(
                            "{source}: cannot read the file (it decides where --header values go)"
                        )
                    })
                    .and_then(|bytes| url_of(bytes, &source)),
                false => read_url_file(path, &source),
            }?;
            return HeartbeatUrl::parse(&text, &source).map(Heartbeat::Configured);
        }
        match env(url_env) {
            None => Ok(Heartbeat::Missing(format!("{url_env} is not set"))),
            Some(value) if value.is_empty() => {
                Ok(Heartbeat::Missing(format!("{url_env} is empty")))
            }
            Some(value) => {
                let source = format!("the URL in {url_env}");
                let value = value
                    .into_string()
                    .map_err(|_| anyhow::anyhow!("{source} is not valid UTF-8"))?;
                HeartbeatUrl::parse(value.trim(), &source).map(Heartbeat::Configured)
            }
        }
    }
}

/// The variable that names the URL file, as `--url-file`'s environment twin.
pub const URL_FILE_VAR: &str = "CRONTAP_HEARTBEAT_URL_FILE";

/// How errors name a file given by `option` or by `var`, its environment twin: the way the
/// operator gave it, so they find where to look.
pub(crate) fn file_source(option: &str, var: &str, path: &Path, from_env: bool) -> String {
    match from_env {
        true => format!("{var} ({})", path.display()),
        false => format!("{option} {}", path.display()),
    }
}

/// Reads a URL from a file that holds only it (a mounted secret): at most 8 KiB of UTF-8,
/// a byte-order mark at the start ignored (editors on Windows write one), blank lines and
/// surrounding whitespace too. A second non-empty line is refused rather than read as part
/// of the URL. Errors name `source`, never the contents. The state store's URL file
/// (`--state-url-file`) is read with it too.
pub(crate) fn read_url_file(path: &Path, source: &str) -> Result<String> {
    let text = read_small(path, MAX_URL_FILE).with_context(|| format!("{source}: cannot read"))?;
    url_of(text, source)
}

/// The URL a URL file's bytes hold, as [`read_url_file`] says.
pub(crate) fn url_of(text: Vec<u8>, source: &str) -> Result<String> {
    let text = String::from_utf8(text)
        .map_err(|_| anyhow::anyhow!("{source}: the file is not valid UTF-8"))?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    // Every kind of line break counts as one (a lone CR, VT, FF, NEL, U+2028, U+2029), so
    // that no second line is glued onto the URL.
    let mut lines = text
        .split(is_line_break)
        .map(str::trim)
        .filter(|line| !line.is_empty());
    let url = lines.next().unwrap_or_default();
    if lines.next().is_some() {
        bail!("{source}: the file has more than one line; it must hold the URL alone");
    }
    Ok(url.to_owned())
}

/// Whether `c` ends a line in some convention: LF, CR, VT, FF, NEL, U+2028 and U+2029.
fn is_line_break(c: char) -> bool {
    matches!(
        c,
        '\n' | '\r' | '\u{b}' | '\u{c}' | '\u{85}' | '\u{2028}' | '\u{2029}'
    )
}

/// Reads a file of at most `max` bytes. Links are followed (a Kubernetes secret volume's
/// files are links), but only a regular file is read: a FIFO would hold the job back for
/// ever.
fn read_small(path: &Path, max: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)?;
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    let mut text = Vec::new();
    file.take(max + 1).read_to_end(&mut text)?;
    if text.len() as u64 > max {
        return Err(std::io::Error::other(format!(
            "larger than {} KiB, too large for what it should hold",
            max / 1024
        )));
    }
    Ok(text)
}

impl HeartbeatUrl {
    /// Validates an absolute http(s) URL. `source` names where it came from for errors; the
    /// value itself never appears in them.
    pub fn parse(text: &str, source: &str) -> Result<HeartbeatUrl> {
        if text.is_empty() {
            bail!("{source} is empty");
        }
        // url::ParseError's messages describe the problem without quoting the input.
        let url =
            Url::parse(text).map_err(|e| anyhow::anyhow!("{source} is not a valid URL ({e})"))?;
        if !matches!(url.scheme(), "http" | "https") {
            bail!("{source} must be an http or https URL");
        }
        if !writes_a_host(text) || url.host_str().is_none_or(str::is_empty) {
            bail!("{source} has no host: it must start with http://HOST or https://HOST");
        }
        Ok(HeartbeatUrl {
            url,
            raw: text.to_owned(),
        })
    }

    pub fn is_https(&self) -> bool {
        self.url.scheme() == "https"
    }

    /// The success ping: the URL as configured.
    pub fn success(&self) -> Url {
        self.url.clone()
    }

    /// `<url>/fail?<existing query>&msg=<msg>`: one slash whatever the path ends with; empty
    /// query pieces and an existing `msg` are dropped.
    pub fn failure(&self, msg: &str) -> Url {
        self.endpoint("fail", &[("msg", msg)])
    }

    /// `<url>/<segment>?<existing query>&<added>`: the path gets one slash and `segment`
    /// whatever it ends with, the query keeps its pieces but empty ones and those of a name
    /// `added` sets, and each added value is percent-encoded.
    pub fn endpoint(&self, segment: &str, added: &[(&str, &str)]) -> Url {
        let mut url = self.url.clone();
        // set_path keeps existing escapes (`%2F` stays `%2F`).
        let path = self.url.path().trim_end_matches('/');
        url.set_path(&format!("{path}/{segment}"));
        let added: Vec<String> = added
            .iter()
            .map(|(name, value)| format!("{name}={}", utf8_percent_encode(value, QUERY_VALUE)))
            .collect();
        let kept = self
            .url
            .query()
            .unwrap_or_default()
            .split('&')
            .filter(|piece| {
                let key = piece.split('=').next().unwrap_or_default();
                !piece.is_empty() && !added.iter().any(|a| a.split('=').next() == Some(key))
            });
        let query: Vec<&str> = kept.chain(added.iter().map(String::as_str)).collect();
        match query.is_empty() {
            true => url.set_query(None),
            false => url.set_query(Some(&query.join("&"))),
        }
        url
    }

    /// `host` or `host:port`: the only part of the URL that may be printed.
    pub fn host(&self) -> String {
        let host = self.url.host_str().unwrap_or_default();
        match self.url.port() {
            Some(port) => format!("{host}:{port}"),
            None => host.to_owned(),
        }
    }

    /// `scheme://host/…`, for showing which URL is meant without revealing it.
    pub fn redacted(&self) -> String {
        format!("{}://{}/…", self.url.scheme(), self.host())
    }

    /// Strings that must never leave the program: the whole URL and every path segment,
    /// query value, user name and password long enough to be a token, both as written in the
    /// URL and percent-decoded.
    pub fn secrets(&self) -> Vec<String> {
        let url = &self.url;
        let mut raw = vec![self.raw.as_str(), url.as_str()];
        raw.extend(url.path_segments().into_iter().flatten());
        // Whole query pieces and their values, for tokens in `?TOKEN` or `?k=TOKEN`; never a
        // name alone (`?source=cron` must not take the word "source" out of every summary).
        for piece in url.query().into_iter().flat_map(|q| q.split('&')) {
            raw.push(piece);
            if let Some((_, value)) = piece.split_once('=') {
                raw.push(value);
            }
        }
        let mut out: Vec<String> = raw
            .iter()
            .flat_map(|s| {
                [
                    (*s).to_owned(),
                    percent_decode_str(s).decode_utf8_lossy().into_owned(),
                ]
            })
            .chain(url_secrets(url))
            .filter(|s| s.len() >= MIN_SECRET_LEN)
            .collect();
        out.sort();
        out.dedup();
        out
    }
}

/// Whether `text` has a host written where a URL's host goes: the scheme, `://`, then a host
/// before the first `/`, `\`, `?` or `#`, past any `user@` and before any `:port`.
///
/// The parser is lenient here, as browsers are: it reads `https:///token`, `http:token` and
/// `https://\token` as having the host `token`, so a URL whose host variable was empty
/// (`https://${HOST}/${TOKEN}`) would be pinged at its token, and the token printed as the
/// host. So the text is read as written, after what the parser itself drops: spaces and
/// control characters at the ends, tabs and line breaks anywhere.
fn writes_a_host(text: &str) -> bool {
    let text: String = text
        .trim_matches(|c: char| c == ' ' || c.is_ascii_control())
        .chars()
        .filter(|c| !matches!(c, '\t' | '\n' | '\r'))
        .collect();
    let Some(rest) = text.split_once(':').and_then(|(_, r)| r.strip_prefix("//")) else {
        return false;
    };
    let authority = rest.split(['/', '\\', '?', '#']).next().unwrap_or_default();
    let host_and_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = match host_and_port.strip_prefix('[') {
        // An IPv6 address: its colons are not a port's.
        Some(inside) => inside.split(']').next().unwrap_or_default(),
        None => host_and_port.split(':').next().unwrap_or_default(),
    };
    !host.is_empty()
}

impl fmt::Debug for HeartbeatUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.redacted())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> HeartbeatUrl {
        HeartbeatUrl::parse(s, "test").unwrap()
    }

    #[test]
    fn failure_joins_with_one_slash_and_keeps_query() {
        let msg = "exit 3 after 2s: a&b=c ü";
        let enc = "exit%203%20after%202s%3A%20a%26b%3Dc%20%C3%BC";
        assert_eq!(
            url("https://h/p/tok").failure(msg).as_str(),
            format!("https://h/p/tok/fail?msg={enc}")
        );
        let cases = [
            ("https://h/p/tok/", "https://h/p/tok/fail?msg=x"),
            ("https://h", "https://h/fail?msg=x"),
            ("https://h/p//", "https://h/p/fail?msg=x"),
            ("https://h/p?a=1&b=2", "https://h/p/fail?a=1&b=2&msg=x"),
            ("https://h/p?a=1&", "https://h/p/fail?a=1&msg=x"),
            ("https://h/p?msg=old&a", "https://h/p/fail?a&msg=x"),
            ("https://h/ab%2Fcd", "https://h/ab%2Fcd/fail?msg=x"),
            ("https://h/caf%C3%A9/", "https://h/caf%C3%A9/fail?msg=x"),
        ];
        for (base, fail) in cases {
            assert_eq!(url(base).failure("x").as_str(), fail, "{base}");
        }
    }

    #[test]
    fn endpoints_add_a_segment_and_replace_what_they_set() {
        let cases = [
            ("https://h/uuid", "https://h/uuid/0"),
            ("https://h/uuid/", "https://h/uuid/0"),
            (
                "https://h/key/slug?create=1",
                "https://h/key/slug/0?create=1",
            ),
            ("https://h/uuid?", "https://h/uuid/0"),
        ];
        for (base, end) in cases {
            assert_eq!(url(base).endpoint("0", &[]).as_str(), end, "{base}");
        }
        assert_eq!(
            url("https://h/u?rid=old&create=1")
                .endpoint("start", &[("rid", "r 1")])
                .as_str(),
            "https://h/u/start?create=1&rid=r%201"
        );
    }

    #[test]
    fn rejects_without_echoing_the_value() {
        for bad in [
            "ftp://h/secret-token",
            "not a url secret-token",
            "/relative/secret-token",
            "https://:secret-token@/x",
        ] {
            let err = format!(
                "{:#}",
                HeartbeatUrl::parse(bad, "the URL in X").unwrap_err()
            );
            assert!(!err.contains("secret-token"), "{err}");
            assert!(err.contains("the URL in X"), "{err}");
        }
    }

    #[test]
    fn a_url_must_write_its_host() {
        for bad in [
            "https:///secret-token",
            "HTTPS:///secret-token",
            "http:secret-token",
            "http:/secret-token",
            "https:////secret-token",
            "https:\\\\secret-token",
            "https://\\secret-token",
            "https://\t/secret-token",
            "https://user@/secret-token",
            "https://secret-token@/x",
            "https://:443/secret-token",
            "https://u:p@:443/secret-token",
            "https://[]/secret-token",
            "http://?secret-token",
            "http://#secret-token",
        ] {
            let err = format!(
                "{:#}",
                HeartbeatUrl::parse(bad, "the URL in X").unwrap_err()
            );
            assert!(!err.contains("secret-token"), "{bad:?}: {err}");
            assert!(err.contains("the URL in X"), "{bad:?}: {err}");
        }
        for good in [
            "https://h/p",
            "http://h:8080",
            "https://u:p@h/p",
            "https://u:p@ss@h/p",
            "https://[::1]:8443/p",
            "https://h?x",
            "HTTPS://H/p",
        ] {
            assert!(HeartbeatUrl::parse(good, "test").is_ok(), "{good}");
        }
    }

    #[test]
    fn redacted_and_secrets() {
        let u = url(
            "HTTPS://tokenuser:hunter22@hb.example:8443/ping/ab%2Fcdef123?k=longvalue&baretoken99",
        );
        assert_eq!(u.redacted(), "https://hb.example:8443/…");
        assert_eq!(format!("{u:?}"), "https://hb.example:8443/…");
        let s = u.secrets();
        for part in [
            "ab%2Fcdef123",
            "ab/cdef123",
            "longvalue",
            "hunter22",
            "tokenuser",
            "baretoken99",
            "HTTPS://tokenuser:hunter22@hb.example:8443/ping/ab%2Fcdef123?k=longvalue&baretoken99",
        ] {
            assert!(s.iter().any(|x| x == part), "{part} missing from {s:?}");
        }
        assert!(!s.iter().any(|x| x == "ping"));
    }

    #[test]
    fn query_names_are_no_secrets_but_their_values_are() {
        let u =
            url("https://hb.example/ping/ab12cd34ef?source=cronjob&create=1&apikey=s3cr3tvalue");
        let s = u.secrets();
        for name in ["source", "create", "apikey"] {
            assert!(!s.iter().any(|x| x == name), "{name} in {s:?}");
        }
        for value in ["cronjob", "s3cr3tvalue", "apikey=s3cr3tvalue", "ab12cd34ef"] {
            assert!(s.iter().any(|x| x == value), "{value} missing from {s:?}");
        }
    }

    #[test]
    fn file_wins_and_is_trimmed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("url");
        std::fs::write(&path, "  https://h/from-file \n").unwrap();
        let env = |_: &str| Some("https://h/from-env".into());
        let Heartbeat::Configured(u) = Heartbeat::load(Some(&path), "V", false, env).unwrap()
        else {
            panic!("expected a URL")
        };
        assert_eq!(u.success().as_str(), "https://h/from-file");
        assert!(matches!(
            Heartbeat::load(None, "V", false, |_| None).unwrap(),
            Heartbeat::Missing(_)
        ));
    }

    #[test]
    fn url_file_byte_order_mark_and_lines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("url");
        let read = |text: &str| {
            std::fs::write(&path, text).unwrap();
            read_url_file(&path, "the file F").map_err(|e| format!("{e:#}"))
        };
        assert_eq!(read("\u{feff}https://h/t\n").unwrap(), "https://h/t");
        assert_eq!(read("\r\n \n\thttps://h/t \r\n\n").unwrap(), "https://h/t");
        assert_eq!(read("\u{feff}\n").unwrap(), "");
        let err = read("https://h/first-token\n\nhttps://h/second-token").unwrap_err();
        assert!(
            err.contains("the file F") && err.contains("more than one line"),
            "{err}"
        );
        assert!(!err.contains("token"), "{err}");
    }
}
