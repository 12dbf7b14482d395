//! The HTTP client of every request to the heartbeat service: its TLS, its redirect rules,
//! and how one attempt's request is built (the method, the `--header` headers, the body).
//!
//! Redirects are followed (up to 5) without a `Referer`, but never from https to http, nor
//! from http to https, never to another origin while the request carries `--header`
//! values, and never by a 301, 302 or 303 for a POST, which would drop its body.

use std::time::Duration;

use anyhow::{Context, Result};
use reqwest::header::{self, HeaderMap};
use reqwest::{Client, StatusCode, redirect};

use crate::report::protocol::{Method, Request};
use crate::report::proxy::ProxyVars;
use crate::report::tls;

const MAX_REDIRECTS: usize = 5;

/// The redirects that turn a POST into a GET.
const CHANGES_METHOD: [StatusCode; 3] = [
    StatusCode::MOVED_PERMANENTLY,
    StatusCode::FOUND,
    StatusCode::SEE_OTHER,
];

/// A client for `request`. `credentials`: it carries `--header` values, so a redirect may
/// not take them to another origin (reqwest drops only the headers it knows to be
/// credentials, such as `Authorization`). `connect_timeout`: the most time for everything
/// before the request is written.
pub fn for_request(
    request: &Request,
    roots_named: bool,
    proxies: &ProxyVars,
    credentials: bool,
    connect_timeout: Duration,
) -> Result<Client> {
    let url = &request.url;
    let post = request.method == Method::Post;
    let https = url.scheme() == "https";
    // An http-only client gets an empty TLS configuration: no certificates are read for it.
    let tls = match https {
        true => tls::shared_with_roots(roots_named)?,
        false => tls::without_roots()?,
    };
    let origin = url.origin();
    let policy = redirect::Policy::custom(move |attempt| {
        let to_https = attempt.url().scheme() == "https";
        if attempt.previous().len() >= MAX_REDIRECTS {
            attempt.error("too many redirects")
        } else if https && !to_https {
            // The request may carry the token; never move it to plain text.
            attempt.error("redirected from https to http; refused")
        } else if !https && to_https {
            attempt.error("redirected to https; configure the https URL instead")
        } else if post && CHANGES_METHOD.contains(&attempt.status()) {
            // 301, 302 and 303 turn a POST into a GET without its body: the service would
            // record a report with nothing of the run in it.
            attempt.error("a POST redirected with 301, 302 or 303 would lose its body; refused")
        } else if credentials && attempt.url().origin() != origin {
            attempt.error(
                "redirected to another host; refused, as the --header values are for this one",
            )
        } else {
            attempt.follow()
        }
    });
    proxies
        .apply(Client::builder())
        .user_agent(concat!("crontap-run/", env!("CARGO_PKG_VERSION")))
        .tls_backend_preconfigured(tls)
        .redirect(policy)
        // Bounds what comes before the request is written (DNS, connect, TLS, a proxy's
        // tunnel), so that an attempt that ran out of it is known never to have been sent.
        .connect_timeout(connect_timeout)
        // The Referer of a redirected request would carry the URL, token and all.
        .referer(false)
        .build()
        .context("cannot set up the HTTP client")
}

/// One attempt's request: the method, the extra headers, and the body as plain text.
pub fn build(client: &Client, request: &Request, headers: &HeaderMap) -> reqwest::RequestBuilder {
    let builder = match request.method {
        Method::Get => client.get(request.url.clone()),
        Method::Post => client.post(request.url.clone()),
    };
    let builder = builder.headers(headers.clone());
    match &request.body {
        Some(body) => builder
            .header(header::CONTENT_TYPE, "text/plain; charset=utf-8")
            .body(body.clone()),
        None => builder,
    }
}
