//! `crontap-run check` speaks the protocol: `POST <url>/0` (or `/fail`) with the check's
//! message as the body; a 404 says the check does not exist and names `?create=1`.

use super::server::{Healthchecks, Kind};
use super::{path, server};
use crate::harness::{Crontap, Output, SECRET};

fn check(url: &str, args: &[&str]) -> Output {
    Crontap::with_url(url)
        .arg("check")
        .args(["--protocol", "healthchecks"])
        .args(args)
        .run()
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .unwrap()
        .trim()
        .to_owned()
}

#[test]
fn check_posts_a_success_to_0() {
    let (hc, url) = server();
    let out = check(&url, &[]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let pings = hc.pings();
    assert_eq!(pings.len(), 1, "{pings:#?}");
    let ping = &pings[0];
    assert_eq!(ping.method, "POST");
    assert_eq!(ping.path, path("0"));
    assert_eq!(ping.kind, Some(Kind::Exit(0)));
    assert_eq!(
        ping.body_text(),
        format!("crontap-run check from {}", hostname())
    );
}

#[test]
fn check_fail_posts_to_fail() {
    let (hc, url) = server();
    let out = check(&url, &["--fail"]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let pings = hc.pings();
    assert_eq!(pings.len(), 1, "{pings:#?}");
    assert_eq!(pings[0].method, "POST");
    assert_eq!(pings[0].path, path("fail"));
    assert_eq!(pings[0].kind, Some(Kind::Fail));
    assert_eq!(
        pings[0].body_text(),
        format!("crontap-run check from {}", hostname())
    );
}

#[test]
fn check_of_an_unknown_check_fails_and_names_create_1() {
    let hc = Healthchecks::start();
    let url = format!("http://{}/{SECRET}/missing-check", hc.host());
    let out = check(&url, &[]);
    assert_ne!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(hc.pings().len(), 1, "404 is not retried");
    assert_eq!(hc.pings()[0].status, 404);
    let text = format!("{}{}", out.stdout, out.stderr);
    assert!(text.contains("?create=1"), "{text}");
    assert!(text.contains("does not exist"), "{text}");
}

/// With `?create=1` the check is created by the test ping.
#[test]
fn check_with_create_1_creates_the_check() {
    let hc = Healthchecks::start();
    let url = format!("http://{}/{SECRET}/made-by-check?create=1", hc.host());
    let out = check(&url, &[]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert!(hc.has_check(&format!("{SECRET}/made-by-check")));
    let ping = &hc.pings()[0];
    assert_eq!(ping.status, 201);
    assert_eq!(ping.param("create").as_deref(), Some("1"));
}

#[test]
fn check_sends_headers_and_never_prints_them() {
    let (hc, url) = server();
    let out = check(&url, &["--header", "X-Test: hvalue-s3cret-1"]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    for text in [&out.stdout, &out.stderr] {
        assert!(!text.contains("hvalue-s3cret-1"), "{text}");
    }
    assert_eq!(hc.pings()[0].header("X-Test"), Some("hvalue-s3cret-1"));
}

/// The crontap protocol's check is unchanged (a GET), with the header added.
#[test]
fn crontap_check_carries_the_header_on_its_get() {
    let hc = Healthchecks::start();
    let url = hc.slug_url("ping", SECRET);
    let out = Crontap::with_url(&url)
        .args(["check", "--header", "X-Test: hvalue-s3cret-1"])
        .run();
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let pings = hc.pings();
    assert_eq!(pings.len(), 1, "{pings:#?}");
    assert_eq!(pings[0].method, "GET");
    assert_eq!(pings[0].path, format!("/ping/{SECRET}"));
    assert_eq!(pings[0].header("X-Test"), Some("hvalue-s3cret-1"));
    assert!(!out.stdout.contains("hvalue-s3cret-1"), "{}", out.stdout);
}
