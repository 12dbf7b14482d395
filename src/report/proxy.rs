//! The proxies pings go through: `HTTPS_PROXY`, `HTTP_PROXY` and `ALL_PROXY` (or their
//! lower-case forms) minus `NO_PROXY`, as curl reads them, judged once and handed to every
//! HTTP client ([`ProxyVars::apply`]) and to `check`.
//!
//! `config` reads the variables (nothing else reads the environment); reqwest's own reading
//! of them is turned off. A variable that cannot be parsed is one warning naming it, never
//! its value (which may hold a proxy password), and the pings it would carry go direct
//! rather than through a proxy named by another variable.

use std::ffi::OsString;

use hyper_util::client::proxy::matcher::Matcher;
use reqwest::{ClientBuilder, NoProxy, Proxy};

/// A proxy variable: its name, and its value (`None`: set, but not UTF-8).
pub type Var = (String, Option<String>);

/// The proxy variables crontap-run was started with.
#[derive(Debug, Default)]
pub struct ProxyVars {
    pub all: Option<Var>,
    pub http: Option<Var>,
    pub https: Option<Var>,
    pub no: Option<Var>,
    /// Started as a CGI program (`REQUEST_METHOD` is set): no proxy variable is trusted,
    /// since a request header could have set `HTTP_PROXY` ("httpoxy"), as reqwest does.
    pub cgi: bool,
}

/// No proxy variable set: every ping goes direct.
pub static DIRECT: ProxyVars = ProxyVars {
    all: None,
    http: None,
    https: None,
    no: None,
    cgi: false,
};

impl ProxyVars {
    /// Reads the variables through `get`: for each, the upper-case name, else the
    /// lower-case one; one set to the empty string counts as unset.
    pub fn read(get: impl Fn(&str) -> Option<OsString>) -> ProxyVars {
        let first = |names: [&str; 2]| {
            names.iter().find_map(|name| {
                let value = get(name).filter(|v| !v.is_empty())?;
                Some(((*name).to_owned(), value.into_string().ok()))
            })
        };
        ProxyVars {
            all: first(["ALL_PROXY", "all_proxy"]),
            http: first(["HTTP_PROXY", "http_proxy"]),
            https: first(["HTTPS_PROXY", "https_proxy"]),
            no: first(["NO_PROXY", "no_proxy"]),
            cgi: get("REQUEST_METHOD").is_some(),
        }
    }

    /// One warning line for each proxy variable that cannot be parsed, naming it.
    pub fn warn_unusable(&self) {
        for (name, value) in [&self.https, &self.http, &self.all].into_iter().flatten() {
            if value.as_deref().is_some_and(socks) {
                tracing::warn!(
                    "{name} names a SOCKS proxy, which crontap-run does not speak (value not \
                     shown); the pings it would carry go direct"
                );
            } else if !usable(value.as_deref()) {
                tracing::warn!(
                    "{name} cannot be parsed as a proxy URL (value not shown); the pings it \
                     would carry go direct"
                );
            }
        }
    }

    /// Whether any proxy variable is set.
    pub fn any(&self) -> bool {
        self.all.is_some() || self.http.is_some() || self.https.is_some()
    }

    /// The variable whose proxy a request of this scheme goes through, and its value, before
    /// `NO_PROXY` is applied: the scheme's own variable, else `ALL_PROXY`; none if the one
    /// that applies cannot be parsed.
    pub fn for_scheme(&self, https: bool) -> Option<(&str, &str)> {
        if self.cgi {
            return None;
        }
        let specific = if https { &self.https } else { &self.http };
        let (name, value) = specific.as_ref().or(self.all.as_ref())?;
        let value = value.as_deref().filter(|v| usable(Some(v)))?;
        Some((name, value))
    }

    /// `NO_PROXY`'s value, if set.
    pub fn no(&self) -> Option<&str> {
        self.no.as_ref().and_then(|(_, v)| v.as_deref())
    }

    /// The client's proxies: these, never the ones reqwest would read itself.
    pub fn apply(&self, builder: ClientBuilder) -> ClientBuilder {
        let mut builder = builder.no_proxy();
        for https in [true, false] {
            let Some((_, value)) = self.for_scheme(https) else {
                continue;
            };
            let proxy = match https {
                true => Proxy::https(value),
                false => Proxy::http(value),
            };
            if let Ok(proxy) = proxy {
                builder = builder.proxy(proxy.no_proxy(self.no().and_then(NoProxy::from_string)));
            }
        }
        builder
    }
}

/// Whether `value` names a proxy both reqwest and its matcher (hyper-util's, which reqwest
/// sends requests by) accept, and one reqwest can speak to (http or https: it is built
/// without SOCKS). Neither says why not, nor is it quoted: it may hold a password.
fn usable(value: Option<&str>) -> bool {
    let Some(value) = value else {
        return false;
    };
    if socks(value) {
        return false;
    }
    let probe: http::Uri = http::Uri::from_static("http://crontap-run.invalid/");
    Proxy::all(value).is_ok()
        && Matcher::builder()
            .all(value)
            .build()
            .intercept(&probe)
            .is_some()
}

/// Whether `value` names a SOCKS proxy (`socks4://`, `socks5h://` …, any case), which both
/// parsers accept but reqwest, built without SOCKS, cannot send a request through.
fn socks(value: &str) -> bool {
    value.split_once("://").is_some_and(|(scheme, _)| {
        scheme
            .get(..5)
            .is_some_and(|head| head.eq_ignore_ascii_case("socks"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> ProxyVars {
        ProxyVars::read(|name| {
            pairs
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| OsString::from(v))
        })
    }

    #[test]
    fn which_variable_carries_which_scheme() {
        let v = vars(&[
            ("HTTPS_PROXY", "http://u:p@[bad"),
            ("http_proxy", "http://proxy.internal:3128"),
            ("ALL_PROXY", "http://all.internal:3128"),
        ]);
        assert_eq!(v.for_scheme(true), None, "a bad HTTPS_PROXY: direct");
        assert_eq!(
            v.for_scheme(false),
            Some(("http_proxy", "http://proxy.internal:3128"))
        );
        let v = vars(&[("ALL_PROXY", "http://all.internal"), ("HTTP_PROXY", "")]);
        assert_eq!(
            v.for_scheme(false),
            Some(("ALL_PROXY", "http://all.internal"))
        );
        // A SOCKS proxy cannot be used: direct, not another variable's proxy.
        let v = vars(&[
            ("ALL_PROXY", "socks5h://all.internal"),
            ("HTTPS_PROXY", "http://proxy.internal:3128"),
        ]);
        assert_eq!(v.for_scheme(false), None);
        assert_eq!(
            v.for_scheme(true),
            Some(("HTTPS_PROXY", "http://proxy.internal:3128"))
        );
        let v = vars(&[("HTTP_PROXY", "http://p:3128"), ("REQUEST_METHOD", "GET")]);
        assert_eq!(v.for_scheme(false), None, "CGI");
    }

    #[test]
    fn unparsable_values() {
        for bad in [
            "http://u:p@[bad",
            "ftp://proxy.internal",
            "http://",
            "http://exa mple:80",
            "socks4://proxy.internal:1080",
            "socks4a://proxy.internal",
            "socks5://user:pass@proxy.internal:1080",
            "SOCKS5H://proxy.internal",
        ] {
            assert!(!usable(Some(bad)), "{bad}");
        }
        for good in [
            "http://proxy.internal:3128",
            "proxy.internal:3128",
            "http://user:pass@proxy.internal",
            "https://[::1]:8443",
        ] {
            assert!(usable(Some(good)), "{good}");
        }
        assert!(!usable(None));
    }
}
