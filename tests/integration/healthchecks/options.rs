//! `--protocol`, `CRONTAP_PROTOCOL`, `--header` and `--body-max`: what they send, and the
//! usage errors (exit 125, one stderr line naming the option, never a header's value).

use super::server::{Healthchecks, Kind};
use super::{assert_end, assert_start, healthchecks, server};
use crate::harness::{Crontap, SECRET};

/// A header value the tests send; a secret like the URL.
const HEADER_SECRET: &str = "hvalue-s3cret-1";

fn assert_never_printed(text: &str, secret: &str) {
    assert!(!text.contains(secret), "{secret} was printed:\n{text}");
}

#[test]
fn auto_and_crontap_stay_crontap_on_a_non_hc_ping_host() {
    for protocol in [None, Some("auto"), Some("crontap")] {
        let hc = Healthchecks::start();
        let url = hc.slug_url("ping", SECRET);
        let mut crontap = Crontap::with_url(&url);
        if let Some(p) = protocol {
            crontap.args(["--protocol", p]);
        }
        let out = crontap.sh("echo fine");
        assert_eq!(out.code, 0, "{protocol:?}: {}", out.stderr);
        let pings = hc.pings();
        assert_eq!(pings.len(), 1, "{protocol:?}: {pings:#?}");
        assert_eq!(pings[0].method, "GET");
        assert_eq!(pings[0].path, format!("/ping/{SECRET}"));
        assert_eq!(pings[0].query, "");
        assert_eq!(pings[0].body_len, 0);
    }
}

#[test]
fn crontap_protocol_failures_keep_the_msg_form() {
    let hc = Healthchecks::start();
    let url = hc.slug_url("ping", SECRET);
    let out = Crontap::with_url(&url)
        .args(["--protocol", "crontap"])
        .sh("echo broken >&2; exit 3");
    assert_eq!(out.code, 3);
    let pings = hc.pings();
    assert_eq!(pings.len(), 1, "{pings:#?}");
    assert_eq!(pings[0].path, format!("/ping/{SECRET}/fail"));
    assert_eq!(pings[0].kind, Some(Kind::Fail));
    let msg = pings[0].param("msg").unwrap();
    assert!(msg.starts_with("exit 3 after "), "{msg}");
}

#[test]
fn crontap_protocol_environment_variable_works_like_the_flag() {
    let (hc, url) = server();
    let out = Crontap::with_url(&url)
        .env("CRONTAP_PROTOCOL", "healthchecks")
        .sh("exit 0");
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_start(&hc.only_start());
    assert_end(&hc.only_end(), "0");
}

/// Set empty, `CRONTAP_PROTOCOL` counts as unset: the crontap protocol.
#[test]
fn an_empty_crontap_protocol_is_auto() {
    let hc = Healthchecks::start();
    let url = hc.slug_url("ping", SECRET);
    let out = Crontap::with_url(&url)
        .env("CRONTAP_PROTOCOL", "")
        .sh("exit 0");
    assert_eq!(out.code, 0, "{}", out.stderr);
    let pings = hc.pings();
    assert_eq!(pings.len(), 1, "{pings:#?}");
    assert_eq!(pings[0].path, format!("/ping/{SECRET}"));
}

#[test]
fn a_header_is_sent_on_start_and_end_and_never_printed() {
    let (hc, url) = server();
    let out = healthchecks(&url)
        .args(["-v", "--header", &format!("X-Test: {HEADER_SECRET}")])
        .sh("echo work; exit 0");
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_never_printed(&out.stdout, HEADER_SECRET);
    assert_never_printed(&out.stderr, HEADER_SECRET);
    let (start, end) = (hc.only_start(), hc.only_end());
    for ping in [&start, &end] {
        assert_eq!(ping.header("X-Test"), Some(HEADER_SECRET), "{ping:#?}");
        assert_eq!(ping.header_count("X-Test"), 1, "{ping:#?}");
    }
}

/// A header value in the command's output is scrubbed from the body like any secret.
#[test]
fn a_header_value_in_the_output_is_redacted_from_the_body() {
    let (hc, url) = server();
    let script = format!("echo 'token is {HEADER_SECRET}'; exit 1");
    let out = healthchecks(&url)
        .args(["--header", &format!("X-Test: {HEADER_SECRET}")])
        .args(["--", "sh", "-c", &script])
        .run();
    assert_eq!(out.code, 1);
    let end = hc.only_end();
    assert_never_printed(&end.body_text(), HEADER_SECRET);
    assert!(
        end.body_text().contains("[REDACTED]"),
        "{}",
        end.body_text()
    );
}

#[test]
fn headers_from_a_file() {
    let (hc, url) = server();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("headers");
    std::fs::write(
        &file,
        "# Cloudflare Access service token\n\
         CF-Access-Client-Id: id-s3cret-2\n\
         \n\
         CF-Access-Client-Secret: cf-s3cret-3\n",
    )
    .unwrap();
    let out = healthchecks(&url)
        .arg("--header")
        .arg(format!("@{}", file.display()))
        .args(["--header", &format!("X-Test: {HEADER_SECRET}")])
        .sh("exit 0");
    assert_eq!(out.code, 0, "{}", out.stderr);
    for secret in ["id-s3cret-2", "cf-s3cret-3", HEADER_SECRET] {
        assert_never_printed(&out.stdout, secret);
        assert_never_printed(&out.stderr, secret);
    }
    for ping in [hc.only_start(), hc.only_end()] {
        assert_eq!(ping.header("CF-Access-Client-Id"), Some("id-s3cret-2"));
        assert_eq!(ping.header("CF-Access-Client-Secret"), Some("cf-s3cret-3"));
        assert_eq!(ping.header("X-Test"), Some(HEADER_SECRET));
    }
}

/// `--body-max` with the crontap protocol (chosen, or picked by `auto` for another host)
/// cannot do anything: one warning says so, and the ping goes out as always.
#[test]
fn body_max_with_the_crontap_protocol_is_warned_about() {
    for protocol in ["auto", "crontap"] {
        let hc = Healthchecks::start();
        let url = hc.slug_url("ping", SECRET);
        let out = Crontap::with_url(&url)
            .args(["--protocol", protocol, "--body-max", "5000"])
            .sh("exit 0");
        assert_eq!(out.code, 0, "{protocol}: {}", out.stderr);
        assert_eq!(out.stderr.lines().count(), 1, "{protocol}: {}", out.stderr);
        assert!(
            out.stderr.contains("--body-max has no effect"),
            "{protocol}: {}",
            out.stderr
        );
        let pings = hc.pings();
        assert_eq!(pings.len(), 1, "{protocol}: {pings:#?}");
        assert_eq!(pings[0].method, "GET");
    }
}

/// The crontap protocol carries `--header` headers on its GET too.
#[test]
fn the_crontap_protocol_sends_headers_too() {
    let hc = Healthchecks::start();
    let url = hc.slug_url("ping", SECRET);
    let out = Crontap::with_url(&url)
        .args(["--header", &format!("X-Test: {HEADER_SECRET}")])
        .sh("exit 0");
    assert_eq!(out.code, 0, "{}", out.stderr);
    let pings = hc.pings();
    assert_eq!(pings.len(), 1, "{pings:#?}");
    assert_eq!(pings[0].method, "GET");
    assert_eq!(pings[0].path, format!("/ping/{SECRET}"));
    assert_eq!(pings[0].header("X-Test"), Some(HEADER_SECRET));
}

/// A usage error: 125, one line on stderr naming `expect`, the command not run, and none of
/// `secrets` printed.
fn refused(args: &[String], expect: &str, secrets: &[&str]) {
    let (hc, url) = server();
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran");
    let out = Crontap::with_url(&url)
        .args(args)
        .arg("--")
        .arg("touch")
        .arg(&marker)
        .run();
    assert_eq!(out.code, 125, "{args:?}: {}", out.stderr);
    assert_eq!(out.stderr.lines().count(), 1, "{args:?}: {}", out.stderr);
    assert!(
        out.stderr.contains(expect),
        "{args:?}: expected {expect:?} in {}",
        out.stderr
    );
    for secret in secrets {
        assert_never_printed(&out.stderr, secret);
        assert_never_printed(&out.stdout, secret);
    }
    assert!(!marker.exists(), "{args:?}: the command ran");
    assert!(hc.pings().is_empty() || hc.starts().is_empty(), "{args:?}");
}

#[test]
fn malformed_headers_are_refused_without_their_value() {
    for (header, secret) in [
        ("NoColon-s3cretA", "s3cretA"),
        ("Bad Name: s3cretB", "s3cretB"),
        ("X: a\u{7f}s3cretC", "s3cretC"),
        (": s3cretD", "s3cretD"),
        ("X-Ok: s3cretE\r\nInjected: 1", "s3cretE"),
        ("X-Tab: s3cretF\u{1}", "s3cretF"),
        ("Bäd: s3cretG", "s3cretG"),
        // The value before the `:`: the name is not quoted either.
        ("X-Api-Key=s3cretK:x", "s3cretK"),
        ("Authorization Basic s3cretL:password", "s3cretL"),
        // The credentials missing, as `Bearer $TOKEN` with the variable empty gives.
        ("Authorization: Bearer ", "-"),
        ("proxy-authorization: basic", "-"),
    ] {
        let args = vec![
            "--protocol".into(),
            "healthchecks".into(),
            "--header".into(),
            header.into(),
        ];
        let secrets: &[&str] = if secret == "-" { &[] } else { &[secret] };
        refused(&args, "--header", secrets);
    }
}

#[test]
fn malformed_header_files_are_refused_without_their_content() {
    let dir = tempfile::tempdir().unwrap();
    for (name, content, secret) in [
        ("empty", "", "-"),
        ("only-comments", "# nothing here\n\n", "nothing here"),
        ("bad-line", "X-Good: fine\nNoColon s3cretH\n", "s3cretH"),
        ("bad-name", "Bad Name: s3cretI\n", "s3cretI"),
        ("control", "X-C: s3cretJ\u{1b}[0m\n", "s3cretJ"),
    ] {
        let file = dir.path().join(name);
        std::fs::write(&file, content).unwrap();
        let args = vec![
            "--protocol".into(),
            "healthchecks".into(),
            "--header".into(),
            format!("@{}", file.display()),
        ];
        let secrets: &[&str] = if secret == "-" { &[] } else { &[secret] };
        refused(&args, "--header", secrets);
    }
    let missing = vec!["--header".into(), "@/nonexistent/headers".into()];
    refused(&missing, "--header", &[]);
}

/// `--body-max=-1`: given as `--body-max -1`, clap takes `-1` for an option and the error
/// names `-1` instead, as for every numeric option.
#[test]
fn bad_body_max_values_are_refused() {
    for value in ["-1", "1048577", "abc", "", "1e4", "99999999999999999999"] {
        let args = vec![
            "--protocol".into(),
            "healthchecks".into(),
            format!("--body-max={value}"),
        ];
        refused(&args, "--body-max", &[]);
    }
    let separate = vec!["--body-max".into(), "1048577".into()];
    refused(&separate, "--body-max", &[]);
}

#[test]
fn body_max_bounds_are_accepted() {
    for value in ["0", "1048576"] {
        let (hc, url) = server();
        let out = healthchecks(&url).args(["--body-max", value]).sh("exit 0");
        assert_eq!(out.code, 0, "--body-max {value}: {}", out.stderr);
        assert_end(&hc.only_end(), "0");
    }
}

#[test]
fn bad_protocols_are_refused() {
    for value in ["hc", "runitor", "Healthchecks ", ""] {
        let args = vec!["--protocol".into(), value.into()];
        refused(&args, "--protocol", &[]);
    }
}

#[test]
fn a_bad_crontap_protocol_variable_is_refused() {
    let (hc, url) = server();
    let out = Crontap::with_url(&url)
        .env("CRONTAP_PROTOCOL", "hc")
        .sh("exit 0");
    assert_eq!(out.code, 125, "{}", out.stderr);
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
    assert!(out.stderr.contains("protocol"), "{}", out.stderr);
    assert!(hc.pings().is_empty() || hc.starts().is_empty());
}

/// `auto` on `hc-ping.com` (and a name under it) is healthchecks. Loopback cannot be
/// hc-ping.com, but a proxy can stand for it: the receiver is the proxy (`HTTP_PROXY`)
/// and gets the absolute URL.
#[test]
fn auto_picks_healthchecks_for_hc_ping_com_through_a_proxy() {
    for host in ["hc-ping.com", "eu.hc-ping.com"] {
        let hc = Healthchecks::start();
        hc.add_check(&format!("{SECRET}/{}", super::SLUG));
        let url = format!("http://{host}/{SECRET}/{}", super::SLUG);
        let out = Crontap::with_url(&url)
            .env("HTTP_PROXY", format!("http://{}", hc.host()))
            .sh("echo fine");
        assert_eq!(out.code, 0, "{host}: {}", out.stderr);
        let (start, end) = (hc.only_start(), hc.only_end());
        assert_start(&start);
        assert_end(&end, "0");
        let rid = start.rid.clone().unwrap();
        assert_eq!(start.target, format!("{url}/start?rid={rid}"), "{host}");
        assert_eq!(end.target, format!("{url}/0?rid={rid}"), "{host}");
    }
    for host in ["nothc-ping.com", "hc-ping.com.example"] {
        let hc = Healthchecks::start();
        hc.add_check(&format!("{SECRET}/{}", super::SLUG));
        let url = format!("http://{host}/{SECRET}/{}", super::SLUG);
        let out = Crontap::with_url(&url)
            .env("HTTP_PROXY", format!("http://{}", hc.host()))
            .sh("echo fine");
        assert_eq!(out.code, 0, "{host}: {}", out.stderr);
        let pings = hc.pings();
        assert_eq!(pings.len(), 1, "{host}: {pings:#?}");
        assert_eq!(pings[0].method, "GET", "{host}");
        assert_eq!(pings[0].target, url, "{host}: the crontap protocol");
    }
}

/// `--protocol crontap` wins over the hc-ping.com host.
#[test]
fn an_explicit_crontap_protocol_wins_over_the_host() {
    let hc = Healthchecks::start();
    hc.add_check(&format!("{SECRET}/{}", super::SLUG));
    let url = format!("http://hc-ping.com/{SECRET}/{}", super::SLUG);
    let out = Crontap::with_url(&url)
        .args(["--protocol", "crontap"])
        .env("HTTP_PROXY", format!("http://{}", hc.host()))
        .sh("exit 0");
    assert_eq!(out.code, 0, "{}", out.stderr);
    let pings = hc.pings();
    assert_eq!(pings.len(), 1, "{pings:#?}");
    assert_eq!(pings[0].target, url);
}

/// A header's value is a secret for the crontap protocol's summary too.
#[test]
fn a_header_value_in_the_output_is_redacted_from_the_crontap_summary() {
    let hc = Healthchecks::start();
    let url = hc.slug_url("ping", SECRET);
    let script = format!("echo 'token is {HEADER_SECRET}' >&2; exit 1");
    let out = Crontap::with_url(&url)
        .args(["--header", &format!("X-Test: {HEADER_SECRET}")])
        .args(["--", "sh", "-c", &script])
        .run();
    assert_eq!(out.code, 1);
    let ping = &hc.pings()[0];
    assert_eq!(ping.path, format!("/ping/{SECRET}/fail"));
    assert_eq!(ping.header("X-Test"), Some(HEADER_SECRET));
    let msg = ping.param("msg").unwrap();
    assert_never_printed(&msg, HEADER_SECRET);
    assert!(msg.ends_with(": token is [REDACTED]"), "{msg}");
}
