//! `crontap-run check`: verifies the heartbeat integration from the host a job runs on.
//!
//! It reads the URL as a run does, then goes through what a ping needs one step at a time
//! (proxy, DNS, connect, TLS, HTTP) and prints one line per step, so that an operator sees
//! where a broken setup breaks and what usually causes it. Then it sends one real ping: the
//! success ping, or with `--fail` a fail ping (`crontap-run check from <host>`), which the
//! heartbeat shows as a failure. It exits 0 only when the service answered 2xx.
//!
//! The URL is a credential: lines name its scheme, host and port only, and every reason
//! that comes from a library is scrubbed of the URL's parts before it is printed. A proxy is
//! named by its scheme, host and port, never its user or password.

use crate::report::proxy::ProxyVars;
use std::io::{self, Write};
use std::net::{IpAddr, SocketAddr, TcpStream, ToSocketAddrs};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Result;
use rustls::pki_types::ServerName;

use crate::report::headers::Headers;
use crate::report::heartbeat::{Heartbeat, HeartbeatUrl};
use crate::report::kind::Kind;
use crate::report::ping;
use crate::report::tls::{self, RootSource};
use crate::run::outcome::HumanDuration;
use crate::sanitize;
use crontap_scrub::Known;

/// What `check` needs, read by `config` from the options and the environment.
pub struct CheckConfig {
    pub heartbeat: Heartbeat,
    /// `--protocol`, decided for the URL: which request is sent and how answers read.
    pub protocol: Kind,
    /// `--header`: sent with the request.
    pub headers: Headers,
    /// `--fail`: send the fail ping instead of the success ping.
    pub fail: bool,
    /// `--ping-timeout`: the deadline of each step.
    pub timeout: Duration,
    /// The proxy variables, as every ping reads them.
    pub proxy: ProxyVars,
    /// `SSL_CERT_FILE` and `SSL_CERT_DIR`, to say which roots verified the server.
    pub ssl_cert_file: Option<String>,
    pub ssl_cert_dir: Option<String>,
}

/// The proxy a request to the URL goes through, as reqwest decides it.
struct Proxy {
    /// `http://proxy.internal:3128`: no user or password.
    shown: String,
    host: String,
    port: u16,
    /// The variable it came from.
    var: String,
}

/// Runs the check and prints its report on stdout.
pub fn run(config: &CheckConfig) -> Result<ExitCode> {
    let mut out = io::stdout().lock();
    let passed = report(config, &mut out);
    let _ = out.flush();
    Ok(match passed {
        true => ExitCode::SUCCESS,
        false => ExitCode::FAILURE,
    })
}

/// Every step of the check, then the ping, each said on `out`; `true` when the service
/// answered 2xx (`heartbeat verify` pings with it too).
pub fn report(config: &CheckConfig, out: &mut dyn Write) -> bool {
    match &config.heartbeat {
        Heartbeat::Missing(why) => {
            line(
                out,
                "URL",
                &format!(
                    "none configured ({why}); set CRONTAP_HEARTBEAT_URL, or \
                     CRONTAP_HEARTBEAT_URL_FILE or --url-file to a file holding it"
                ),
            );
            false
        }
        Heartbeat::Configured(url) => Check {
            config,
            url,
            secrets: Known::new(
                url.secrets()
                    .into_iter()
                    .chain(config.headers.secrets.iter().cloned())
                    .collect::<Vec<_>>(),
            ),
            out,
        }
        .run(),
    }
}

/// The steps before a request to `url` (proxy, DNS, connect, TLS), each said on `out`;
/// `false` at the first that failed. `heartbeat` names with it where an API it could not
/// reach stopped answering.
pub fn reach(config: &CheckConfig, url: &HeartbeatUrl, out: &mut dyn Write) -> bool {
    Check {
        config,
        url,
        secrets: Known::new(url.secrets()),
        out,
    }
    .steps()
}

fn line(out: &mut dyn Write, step: &str, text: &str) {
    // A closed stdout is no reason to fail the check itself.
    let _ = writeln!(out, "{:<9}{}", format!("{step}:"), sanitize::one_line(text));
}

/// The report's writer is a `dyn Write`, so that `check` and `heartbeat` (stdout, and a
/// buffer for an API's steps) share one copy of the steps' code.
struct Check<'a> {
    config: &'a CheckConfig,
    url: &'a HeartbeatUrl,
    /// The URL's parts: replaced wherever a library's message might quote them. Only these,
    /// so that addresses and names, which a diagnosis is about, stay as they are.
    secrets: Known,
    out: &'a mut dyn Write,
}

impl Check<'_> {
    fn say(&mut self, step: &str, text: &str) {
        let text = self.secrets.redact(text);
        line(self.out, step, &text);
    }

    /// For lines made only of the URL's scheme, host and port (`HeartbeatUrl::redacted`):
    /// nothing to redact, and a URL without a path would otherwise match itself.
    fn say_plain(&mut self, step: &str, text: &str) {
        line(self.out, step, text);
    }

    /// Every step in turn; `true` when the service answered 2xx.
    fn run(mut self) -> bool {
        self.steps() && self.http()
    }

    /// The steps before the request; `false` at the first that failed.
    fn steps(&mut self) -> bool {
        let url = self.url;
        let https = url.is_https();
        let (host, port) = host_and_port(url);
        self.say_plain(
            "URL",
            &format!("{} (the token is not shown)", url.redacted()),
        );
        let proxy = self.proxy(&host, https);
        // With a proxy, this host only looks up and connects to the proxy.
        let (dns_host, dns_port) = match &proxy {
            Some(p) => (p.host.clone(), p.port),
            None => (host.clone(), port),
        };
        let Some(addrs) = self.dns(&dns_host, dns_port, proxy.is_some()) else {
            return false;
        };
        let Some(stream) = self.connect(&addrs, proxy.is_some()) else {
            return false;
        };
        match (&proxy, https) {
            (_, false) => self.say("TLS", "none (an http URL)"),
            (Some(p), true) => self.say(
                "TLS",
                &format!(
                    "through the proxy {}; checked with the request below",
                    p.shown
                ),
            ),
            (None, true) => {
                if !self.tls(stream, &host) {
                    return false;
                }
            }
        }
        true
    }

    fn proxy(&mut self, host: &str, https: bool) -> Option<Proxy> {
        let proxy = find_proxy(&self.config.proxy, host, https);
        match (&proxy, &self.config.proxy.no) {
            (Some(p), _) => self.say("proxy", &format!("{} (from {})", p.shown, p.var)),
            (None, Some((var, _))) if self.config.proxy.any() => {
                self.say("proxy", &format!("none ({var} excludes {host})"))
            }
            (None, _) => self.say("proxy", "none"),
        }
        proxy
    }

    fn dns(&mut self, host: &str, port: u16, via_proxy: bool) -> Option<Vec<SocketAddr>> {
        let what = if via_proxy { "the proxy " } else { "" };
        if let Ok(ip) = host.trim_matches(['[', ']']).parse::<IpAddr>() {
            self.say("DNS", &format!("not needed ({what}{ip} is an address)"));
            return Some(vec![SocketAddr::new(ip, port)]);
        }
        let started = Instant::now();
        let (tx, rx) = std::sync::mpsc::channel();
        let name = format!("{host}:{port}");
        // A lookup cannot be cancelled: it runs on a thread left behind if it hangs.
        std::thread::spawn(move || {
            let _ = tx.send(name.to_socket_addrs().map(Vec::from_iter));
        });
        let result = rx.recv_timeout(self.config.timeout);
        let took = Took(started.elapsed());
        match result {
            Ok(Ok(addrs)) if !addrs.is_empty() => {
                let list: Vec<String> = addrs.iter().map(|a| a.ip().to_string()).collect();
                self.say(
                    "DNS",
                    &format!("{what}{host} is {} ({took})", list.join(", ")),
                );
                Some(addrs)
            }
            Ok(Ok(_)) => {
                self.fail_dns(host, "no addresses", via_proxy);
                None
            }
            Ok(Err(err)) => {
                self.fail_dns(host, &err.to_string(), via_proxy);
                None
            }
            Err(_) => {
                let why = format!("no answer within {}", HumanDuration(self.config.timeout));
                self.fail_dns(host, &why, via_proxy);
                None
            }
        }
    }

    fn fail_dns(&mut self, host: &str, why: &str, via_proxy: bool) {
        let hint = match via_proxy {
            true => "check the host name in the proxy variable",
            false => {
                "check the URL's host name, this host's resolver (/etc/resolv.conf, the \
                 container's DNS settings); where only a proxy reaches the internet, set \
                 HTTPS_PROXY"
            }
        };
        self.say(
            "DNS",
            &format!("FAILED: cannot resolve {host}: {why}; {hint}"),
        );
    }

    fn connect(&mut self, addrs: &[SocketAddr], via_proxy: bool) -> Option<TcpStream> {
        let mut last = None;
        for addr in addrs {
            let started = Instant::now();
            match TcpStream::connect_timeout(addr, self.config.timeout) {
                Ok(stream) => {
                    let to = if via_proxy { "the proxy at " } else { "" };
                    let took = Took(started.elapsed());
                    self.say("connect", &format!("{to}{addr} in {took}"));
                    return Some(stream);
                }
                Err(err) => last = Some((addr, err)),
            }
        }
        if let Some((addr, err)) = last {
            let why = strip_os_error(&err.to_string());
            self.say(
                "connect",
                &format!(
                    "FAILED: {addr}: {why}; a firewall may block it, or this host reaches the \
                     internet only through a proxy (HTTPS_PROXY, HTTP_PROXY, NO_PROXY)"
                ),
            );
        }
        None
    }

    /// A TLS handshake of its own on `stream`, with the roots a ping uses.
    fn tls(&mut self, stream: TcpStream, host: &str) -> bool {
        let (roots, source) = tls::roots(self.roots_named());
        let roots_text = self.roots_text(source);
        let name = match ServerName::try_from(host.trim_matches(['[', ']']).to_owned()) {
            Ok(name) => name,
            Err(err) => {
                self.say(
                    "TLS",
                    &format!("FAILED: {host} is not a valid TLS name: {err}"),
                );
                return false;
            }
        };
        let result = tls::build(roots).and_then(|config| {
            let conn = rustls::ClientConnection::new(Arc::new(config), name)?;
            handshake(conn, stream, self.config.timeout)
        });
        match result {
            Ok(version) => {
                self.say(
                    "TLS",
                    &format!("{version}, certificate verified with {roots_text}"),
                );
                true
            }
            Err(err) => {
                let cause = tls_cause(&err, &roots_text, host);
                self.say("TLS", &format!("FAILED: {err:#}; {cause}"));
                false
            }
        }
    }

    /// Whether the environment names the TLS roots, as a ping would see it.
    fn roots_named(&self) -> bool {
        self.config.ssl_cert_file.is_some() || self.config.ssl_cert_dir.is_some()
    }

    fn roots_text(&self, source: RootSource) -> String {
        let set = match (&self.config.ssl_cert_file, &self.config.ssl_cert_dir) {
            (Some(file), Some(dir)) => format!(" from SSL_CERT_FILE {file} and SSL_CERT_DIR {dir}"),
            (Some(file), None) => format!(" from SSL_CERT_FILE {file}"),
            (None, Some(dir)) => format!(" from SSL_CERT_DIR {dir}"),
            (None, None) => String::new(),
        };
        match source {
            RootSource::System(n) => format!("the system's roots ({n} certificates{set})"),
            RootSource::Bundled if !set.is_empty() => {
                format!("the bundled Mozilla roots (no usable certificate{set})")
            }
            RootSource::Bundled => {
                "the bundled Mozilla roots (this system has no CA bundle)".to_owned()
            }
        }
    }

    /// Sends the real ping; `true` for a 2xx answer.
    fn http(&mut self) -> bool {
        let protocol = self.config.protocol.get();
        let request = protocol.check(self.url, self.config.fail, &hostname());
        let shown = format!(
            "{} ({} protocol)",
            request.describe(self.url),
            protocol.name()
        );
        self.say_plain("sending", &shown);
        let started = Instant::now();
        let headers = &self.config.headers.map;
        let result = ping::probe(
            &request,
            headers,
            self.config.timeout,
            self.roots_named(),
            &self.config.proxy,
        );
        let took = Took(started.elapsed());
        match result {
            Ok(status) if status.is_success() => {
                self.say("HTTP", &format!("{status} in {took}"));
                let what = match self.config.fail {
                    true => "a failure (it should show \"crontap-run check from …\")",
                    false => "a success",
                };
                self.say("result", &format!("OK: the heartbeat received {what}"));
                true
            }
            Ok(status) => {
                self.say("HTTP", &format!("{status} in {took}"));
                let advice = match status.as_u16() {
                    404 | 410 => protocol.not_found(),
                    401 | 403 => "the service refused the request: check that the URL is complete",
                    408 | 429 | 500..=599 => {
                        "the service is busy or failing; runs retry this within --ping-budget"
                    }
                    _ => "the service did not accept the ping",
                };
                self.say("result", &format!("FAILED: {advice}"));
                false
            }
            Err(reason) => {
                self.say("HTTP", &format!("FAILED after {took}: {reason}"));
                self.say("result", "FAILED: no answer from the heartbeat service");
                false
            }
        }
    }
}

/// A step's duration: `under 1ms`, `35ms`, `2s`.
struct Took(Duration);

impl std::fmt::Display for Took {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 < Duration::from_millis(1) {
            true => f.write_str("under 1ms"),
            false => HumanDuration(self.0).fmt(f),
        }
    }
}

/// The URL's host (brackets kept for IPv6) and port.
fn host_and_port(url: &HeartbeatUrl) -> (String, u16) {
    let target = url.success();
    let host = target.host_str().unwrap_or_default().to_owned();
    (host, target.port_or_known_default().unwrap_or(443))
}

/// The proxy for a request to `host`, by hyper-util's matcher: the one reqwest uses.
fn find_proxy(vars: &ProxyVars, host: &str, https: bool) -> Option<Proxy> {
    use hyper_util::client::proxy::matcher::Matcher;
    let (var, value) = vars.for_scheme(https)?;
    let builder = match https {
        true => Matcher::builder().https(value.to_owned()),
        false => Matcher::builder().http(value.to_owned()),
    };
    let builder = builder.no(vars.no().unwrap_or_default().to_owned());
    let scheme = if https { "https" } else { "http" };
    // Only the host goes in: never the path with the token.
    let dst: http::Uri = format!("{scheme}://{host}/").parse().ok()?;
    let intercept = builder.build().intercept(&dst)?;
    let uri = intercept.uri();
    let proxy_host = uri.host()?.to_owned();
    let proxy_scheme = uri.scheme_str().unwrap_or("http");
    let port = uri
        .port_u16()
        .unwrap_or(if proxy_scheme == "https" { 443 } else { 80 });
    let var = var.to_owned();
    Some(Proxy {
        shown: format!("{proxy_scheme}://{proxy_host}:{port}"),
        host: proxy_host,
        port,
        var,
    })
}

/// Completes a TLS handshake on `stream`; the protocol version agreed.
fn handshake(
    mut conn: rustls::ClientConnection,
    mut stream: TcpStream,
    timeout: Duration,
) -> Result<String> {
    stream.set_read_timeout(Some(timeout))?;
    stream.set_write_timeout(Some(timeout))?;
    while conn.is_handshaking() {
        conn.complete_io(&mut stream)?;
    }
    // Flush the client's last handshake message so the server is not left waiting.
    while conn.wants_write() {
        conn.write_tls(&mut stream)?;
    }
    let version = conn
        .protocol_version()
        .and_then(|v| v.as_str())
        .unwrap_or("TLS")
        .replace('_', ".")
        .replace("TLSv1.", "TLS 1.");
    Ok(version)
}

/// The likely cause of a failed handshake, in words an operator can act on.
fn tls_cause(err: &anyhow::Error, roots: &str, host: &str) -> String {
    use rustls::CertificateError as C;
    let rustls_err = err.chain().find_map(|e| {
        e.downcast_ref::<rustls::Error>().or_else(|| {
            e.downcast_ref::<io::Error>()
                .and_then(|io| io.get_ref())
                .and_then(|inner| inner.downcast_ref::<rustls::Error>())
        })
    });
    match rustls_err {
        Some(rustls::Error::InvalidCertificate(C::UnknownIssuer | C::BadSignature)) => format!(
            "the server's certificate does not chain to a root trusted here ({roots}): for a \
             private CA, point SSL_CERT_FILE at its PEM file; a FROM scratch image without a \
             CA bundle falls back to the bundled Mozilla roots; a TLS-inspecting proxy or \
             firewall needs its CA in SSL_CERT_FILE"
        ),
        Some(rustls::Error::InvalidCertificate(
            C::NotValidForName | C::NotValidForNameContext { .. },
        )) => {
            format!(
                "the certificate is not for {host}: check the URL's host, and whether \
                 something else answers on this address"
            )
        }
        Some(rustls::Error::InvalidCertificate(
            C::Expired | C::ExpiredContext { .. } | C::NotValidYet | C::NotValidYetContext { .. },
        )) => "the certificate is expired or not yet valid: check this host's clock".to_owned(),
        _ => format!(
            "the TLS handshake failed (roots: {roots}); a proxy or firewall that intercepts \
             TLS, or a server that is not speaking TLS on this port, are common causes"
        ),
    }
}

fn strip_os_error(text: &str) -> String {
    match text.rfind(" (os error ") {
        Some(at) if text.ends_with(')') => text[..at].to_owned(),
        _ => text.to_owned(),
    }
}

/// This host's name, for the fail ping's message.
fn hostname() -> String {
    crate::host::name().unwrap_or_else(|| "an unnamed host".to_owned())
}
