//! The network runtime and HTTP client every request to the heartbeat service goes out on:
//! one of each per run, set up when the first request is due (a run that sends nothing sets
//! up neither), and how one request is built and sent.
//!
//! The runtime is a current-thread tokio runtime, and the client is tied to it. Whoever
//! sends (the start's thread, then the end) borrows both ([`with_net`]) and puts them back
//! before saying how it went, so the end always finds what the start used. A pair that is
//! out (only after a bug abandoned the thread that held it) is never waited for: the next
//! request sets up another. Nothing waits for the runtime's threads either: a DNS lookup
//! stuck past its deadline runs on a thread that cannot be cancelled, and the runtime is
//! never dropped (it lives until the process exits), only shut down without waiting when a
//! second one comes back.
//!
//! Under an open-files limit so low that the runtime's descriptors could be what the next
//! attempt of the command needs, the runtime is shut down after each request instead (see
//! `run::descriptors`). No connection is kept between requests: a run's pings can be hours apart, the server
//! closes a connection left idle, and a request written on one it closed is an attempt lost.
//!
//! Redirects are followed (up to 5) without a `Referer`, but never from https to http, nor
//! from http to https, never to another origin while the request carries `--header`
//! values, and never by a 301, 302 or 303 for a POST, which would drop its body. The client
//! is shared by requests of both methods, while its redirect policy is told nothing of the
//! request: each request's [`Rules`] travel with it, in a task-local value the policy reads.

use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use anyhow::{Context, Result};
use reqwest::header::{self, HeaderMap};
use reqwest::{Client, StatusCode, redirect};
use tokio::runtime::Runtime;

use crate::report::protocol::{Method, Request};
use crate::report::proxy::ProxyVars;
use crate::report::tls;
use crate::run::descriptors;

const MAX_REDIRECTS: usize = 5;

/// The redirects that turn a POST into a GET.
const CHANGES_METHOD: [StatusCode; 3] = [
    StatusCode::MOVED_PERMANENTLY,
    StatusCode::FOUND,
    StatusCode::SEE_OTHER,
];

/// Descriptors a request needs once the runtime is set up: its connection.
const CONNECTION: usize = 1;

/// How the run's client is set up: the same for every request of a run.
#[derive(Clone, Copy)]
pub struct Settings<'a> {
    /// `SSL_CERT_FILE` or `SSL_CERT_DIR` names the roots (see [`tls::with_roots`]).
    pub roots_named: bool,
    pub proxies: &'a ProxyVars,
    /// The most time for everything before a request is written (DNS, connect, TLS, a
    /// proxy's tunnel): the first request's ping timeout. Later requests of a run never
    /// have a longer one, and bound each attempt by their own.
    pub connect_timeout: Duration,
}

/// The runtime and the client on it.
struct Net {
    runtime: Runtime,
    client: Client,
    /// The client trusts TLS roots (it was set up for an https URL).
    roots: bool,
}

/// The run's runtime and client, while no request has them.
static NET: Mutex<Option<Net>> = Mutex::new(None);

fn slot() -> std::sync::MutexGuard<'static, Option<Net>> {
    NET.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Whether the open-files limit leaves room for a request now: its connection, and the
/// runtime's descriptors unless it is set up already.
pub fn have_room() -> bool {
    let set_up = slot().is_some();
    descriptors::have_room(match set_up {
        true => CONNECTION,
        false => descriptors::PING,
    })
}

/// Runs `send` with the run's runtime and client for `request`, setting them up if this
/// is the first request (or the pair is out), and puts them back when it returns. The
/// error says why they could not be set up.
pub fn with_net<T>(
    request: &Request,
    settings: Settings<'_>,
    send: impl FnOnce(&Runtime, &Client) -> T,
) -> Result<T, String> {
    let https = request.url.scheme() == "https";
    let taken = slot().take();
    let net = match taken {
        Some(net) => net,
        None => set_up(https, settings)?,
    };
    // Lent from here on, so that the pair goes back however this ends: dropping the
    // runtime could wait for a DNS lookup stuck on one of its threads.
    let mut lent = Lent(Some(net));
    let net = lent.0.as_mut().expect("lent");
    // An http-only client trusts no roots; one for https is set up again (never within a
    // run, whose requests all go to one URL's origin).
    if https && !net.roots {
        let _entered = net.runtime.enter();
        net.client = client(true, settings).map_err(|e| format!("{e:#}"))?;
        net.roots = true;
    }
    Ok(send(&net.runtime, &net.client))
}

/// A runtime and client lent out: put back when dropped, after the request or a panic.
struct Lent(Option<Net>);

impl Drop for Lent {
    fn drop(&mut self) {
        let Some(net) = self.0.take() else { return };
        // Under an open-files limit that leaves less room than an attempt of the command
        // needs, the runtime's descriptors are given back (a runtime per request then, as
        // it would take them from a later attempt).
        if !descriptors::have_room(descriptors::BEFORE_SPAWN) {
            tracing::debug!("network runtime shut down: the open-files limit leaves little room");
            net.runtime.shutdown_background();
            return;
        }
        let mut slot = slot();
        match &*slot {
            None => *slot = Some(net),
            // Another was set up while this one was out: keep one, never wait for the other.
            Some(_) => net.runtime.shutdown_background(),
        }
    }
}

/// How many runtimes and clients were set up, for the tests.
#[cfg(test)]
static SET_UPS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

fn set_up(https: bool, settings: Settings<'_>) -> Result<Net, String> {
    #[cfg(test)]
    SET_UPS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the network runtime: {e}"))?;
    let client = {
        let _entered = runtime.enter();
        client(https, settings).map_err(|e| format!("{e:#}"))
    };
    let client = match client {
        Ok(client) => client,
        Err(err) => {
            runtime.shutdown_background();
            return Err(err);
        }
    };
    tracing::debug!(
        "network runtime and HTTP client set up, for an {}",
        match https {
            true => "https URL",
            false => "http URL (no certificates read)",
        }
    );
    Ok(Net {
        runtime,
        client,
        roots: https,
    })
}

/// The tests make setting up a client for https fail with this.
#[cfg(test)]
static FAIL_HTTPS_CLIENT: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The client: trusting TLS roots if `https`, with the redirect policy of [`Rules`].
fn client(https: bool, settings: Settings<'_>) -> Result<Client> {
    #[cfg(test)]
    if https && FAIL_HTTPS_CLIENT.load(std::sync::atomic::Ordering::SeqCst) {
        anyhow::bail!("the https client refused for a test");
    }
    // An http-only client gets an empty TLS configuration: no certificates are read for it.
    let tls = match https {
        true => tls::shared_with_roots(settings.roots_named)?,
        false => tls::without_roots()?,
    };
    let policy = redirect::Policy::custom(|attempt| match RULES.try_with(Rules::clone) {
        Ok(rules) => rules.redirect(attempt),
        Err(_) => attempt.error("a redirect of a request sent without its rules; refused"),
    });
    settings
        .proxies
        .apply(Client::builder())
        .user_agent(concat!("crontap-run/", env!("CARGO_PKG_VERSION")))
        .tls_backend_preconfigured(tls)
        .redirect(policy)
        // Bounds what comes before the request is written (DNS, connect, TLS, a proxy's
        // tunnel), so that an attempt that ran out of it is known never to have been sent.
        .connect_timeout(settings.connect_timeout)
        // The Referer of a redirected request would carry the URL, token and all.
        .referer(false)
        .pool_max_idle_per_host(0)
        .build()
        .context("cannot set up the HTTP client")
}

tokio::task_local! {
    /// The redirect rules of the request being sent: the policy, which the client was set
    /// up with, is called while that request's future is polled.
    static RULES: Rules;
}

/// What a request's redirects may do, from the request itself.
#[derive(Clone)]
struct Rules {
    post: bool,
    https: bool,
    /// The URL asked for, whose origin a redirect may have to keep.
    url: reqwest::Url,
    /// It carries `--header` values, so a redirect may not take them to another origin
    /// (reqwest drops only the headers it knows to be credentials, such as
    /// `Authorization`).
    credentials: bool,
}

impl Rules {
    fn of(request: &Request, credentials: bool) -> Rules {
        Rules {
            // A request with a body (a POST, or a push's PUT) keeps its method.
            post: request.method != Method::Get,
            https: request.url.scheme() == "https",
            url: request.url.clone(),
            credentials,
        }
    }

    fn redirect(&self, attempt: redirect::Attempt<'_>) -> redirect::Action {
        let to_https = attempt.url().scheme() == "https";
        if attempt.previous().len() >= MAX_REDIRECTS {
            attempt.error("too many redirects")
        } else if self.https && !to_https {
            // The request may carry the token; never move it to plain text.
            attempt.error("redirected from https to http; refused")
        } else if !self.https && to_https {
            attempt.error("redirected to https; configure the https URL instead")
        } else if self.post && CHANGES_METHOD.contains(&attempt.status()) {
            // 301, 302 and 303 turn a POST into a GET without its body: the service would
            // record a report with nothing of the run in it. (So a POST is still a POST at
            // every redirect it follows: 307 and 308 keep the method.)
            attempt.error("a POST redirected with 301, 302 or 303 would lose its body; refused")
        } else if self.credentials && attempt.url().origin() != self.url.origin() {
            attempt.error(
                "redirected to another host; refused, as the --header values are for this one",
            )
        } else {
            attempt.follow()
        }
    }
}

/// Sends one attempt of `request` with `headers` (the method, the extra headers, and the
/// body as plain text), its redirects under its own [`Rules`].
pub async fn send(
    client: &Client,
    request: &Request,
    headers: &HeaderMap,
) -> reqwest::Result<reqwest::Response> {
    let builder = match request.method {
        Method::Get => client.get(request.url.clone()),
        Method::Post => client.post(request.url.clone()),
        Method::Put => client.put(request.url.clone()),
    };
    let builder = builder.headers(headers.clone());
    // A push is Prometheus' text exposition format, version 0.0.4.
    let content_type = match request.method {
        Method::Put => "text/plain; version=0.0.4; charset=utf-8",
        _ => "text/plain; charset=utf-8",
    };
    let builder = match &request.body {
        Some(body) => builder
            .header(header::CONTENT_TYPE, content_type)
            .body(body.clone()),
        None => builder,
    };
    let rules = Rules::of(request, !headers.is_empty());
    RULES.scope(rules, builder.send()).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::proxy::DIRECT;
    use std::sync::atomic::Ordering;
    use std::sync::mpsc;

    fn request(method: Method) -> Request {
        Request {
            method,
            url: "http://127.0.0.1:9/ping".parse().unwrap(),
            body: None,
            shown: String::new(),
        }
    }

    fn settings() -> Settings<'static> {
        Settings {
            roots_named: false,
            proxies: &DIRECT,
            connect_timeout: Duration::from_secs(1),
        }
    }

    /// The tests here share the run's one slot: one at a time, each starting with it empty.
    fn alone() -> std::sync::MutexGuard<'static, ()> {
        static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());
        let guard = ONE_AT_A_TIME.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(net) = slot().take() {
            net.runtime.shutdown_background();
        }
        guard
    }

    /// Requests of both methods, one after the other and from other threads (the start's
    /// thread, then the end), get the one runtime and client; one asked for while they are
    /// out gets a second, and only one of the two is kept.
    #[test]
    fn one_runtime_and_client_serve_every_request_in_turn() {
        let _alone = alone();
        let settings = settings();
        let before = SET_UPS.load(Ordering::SeqCst);
        let set_ups = || SET_UPS.load(Ordering::SeqCst) - before;
        with_net(&request(Method::Get), settings, |_, _| ()).unwrap();
        assert_eq!(set_ups(), 1);
        std::thread::spawn(move || {
            with_net(&request(Method::Post), settings, |runtime, _| {
                runtime.block_on(tokio::task::yield_now())
            })
            .unwrap()
        })
        .join()
        .unwrap();
        assert_eq!(set_ups(), 1, "the second request set up another");
        with_net(&request(Method::Post), settings, |_, _| {
            assert!(slot().is_none(), "lent out");
            with_net(&request(Method::Get), settings, |_, _| ()).unwrap();
        })
        .unwrap();
        assert_eq!(set_ups(), 2);
        assert!(slot().is_some(), "one kept");
        with_net(&request(Method::Get), settings, |_, _| ()).unwrap();
        assert_eq!(set_ups(), 2);
    }

    /// A client set up again for https that fails gives the runtime back instead of dropping
    /// it: dropping a tokio runtime waits for its blocking threads, and a DNS lookup
    /// (reqwest's resolver runs getaddrinfo on one of them) can be stuck far past its
    /// deadline. The stuck lookup here is such a blocking task, which ends only when the
    /// test lets it: before the fix, the failed rebuild waited for it.
    #[test]
    fn a_failed_rebuild_never_waits_for_a_stuck_lookup() {
        let _alone = alone();
        let (started_tx, started) = mpsc::channel();
        let (release, released) = mpsc::channel::<()>();
        with_net(&request(Method::Get), settings(), |runtime, _| {
            let _entered = runtime.enter();
            drop(tokio::task::spawn_blocking(move || {
                started_tx.send(()).unwrap();
                let _ = released.recv();
            }));
        })
        .unwrap();
        started.recv().expect("the lookup runs");

        FAIL_HTTPS_CLIENT.store(true, Ordering::SeqCst);
        let (done_tx, done) = mpsc::channel();
        let rebuild = std::thread::spawn(move || {
            let mut https = request(Method::Get);
            https.url = "https://127.0.0.1:9/ping".parse().unwrap();
            let sent = with_net(&https, settings(), |_, _| ());
            done_tx.send(sent.err()).unwrap();
        });
        let outcome = done.recv_timeout(Duration::from_secs(30));
        FAIL_HTTPS_CLIENT.store(false, Ordering::SeqCst);
        release.send(()).unwrap();
        rebuild.join().unwrap();

        let err = outcome.expect("the failed rebuild waited for the stuck lookup");
        assert!(
            err.as_deref() == Some("the https client refused for a test"),
            "{err:?}"
        );
        assert!(
            slot().as_ref().is_some_and(|net| !net.roots),
            "the runtime set up for http was kept"
        );
    }
}
