//! `heartbeat create` on Crontap: the REST call of Crontap's heartbeat guide (headers and
//! body), the ping URL from `pingUrl` or `url`, and an existing URL file that sends nothing.

use super::stand_in::{CrontapAnswer, crontap};
use super::{Keys, assert_clean, assert_one_line_error, mode, run, url_in};

fn create(
    keys: &Keys,
    api: &str,
    file: &std::path::Path,
    extra: &[&str],
) -> crate::harness::Output {
    let mut args = vec![
        "heartbeat",
        "create",
        "--api-url",
        api,
        "--name",
        "nightly-import",
        "--url-file",
        file.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    run(keys, &args)
}

#[test]
fn sends_the_guides_request_and_keeps_the_ping_url() {
    let keys = Keys::new();
    let api = crontap(&keys.client_id, &keys.crontap, CrontapAnswer::PingUrl);
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("hb/nightly-import.url");
    // Weekdays at 9: the longest gap is Friday to Monday, 3 days.
    let out = create(
        &keys,
        &api.url(),
        &file,
        &["--schedule", "0 9 * * 1-5", "--tz", "UTC", "--grace", "10m"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let calls = api.api_calls();
    assert_eq!(calls.len(), 1);
    let call = &calls[0];
    assert_eq!(
        (call.method.as_str(), call.path.as_str()),
        ("POST", "/v1/heartbeat")
    );
    assert_eq!(call.header("ClientId"), Some(keys.client_id.as_str()));
    assert_eq!(call.header("ApiKey"), Some(keys.crontap.as_str()));
    assert_eq!(call.header("Content-Type"), Some("application/json"));
    assert_eq!(
        call.json(),
        serde_json::json!({"name": "nightly-import", "periodMinutes": 4320, "graceMinutes": 10})
    );
    let (token, url) = api.with_state(|s| {
        let token = s.made[0].0.clone();
        (token.clone(), format!("{}/ping/{token}", api.url()))
    });
    assert_eq!(url_in(&file), url);
    assert_eq!(mode(&file), 0o600);
    assert_eq!(mode(file.parent().unwrap()), 0o700);
    assert!(
        out.stderr.contains("period 4320 min, grace 10 min"),
        "{}",
        out.stderr
    );
    assert_clean(&out, &keys, &[url, token]);
}

#[test]
fn the_url_field_is_read_when_there_is_no_ping_url_field() {
    let keys = Keys::new();
    let api = crontap(&keys.client_id, &keys.crontap, CrontapAnswer::Url);
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("x.url");
    let out = create(&keys, &api.url(), &file, &["--period", "15m"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let token = api.with_state(|s| s.made[0].0.clone());
    assert!(url_in(&file).ends_with(&token));
    assert_eq!(api.api_calls()[0].json()["periodMinutes"], 15);
    assert_eq!(api.api_calls()[0].json()["graceMinutes"], 1);
}

#[test]
fn an_answer_without_a_url_names_the_fields_it_had_and_leaves_no_file() {
    let keys = Keys::new();
    let api = crontap(&keys.client_id, &keys.crontap, CrontapAnswer::NoUrl);
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("x.url");
    let out = create(&keys, &api.url(), &file, &["--period", "1h"]);
    assert_one_line_error(&out);
    assert!(
        out.stderr
            .contains("no pingUrl or url field (it had: id, name)"),
        "{}",
        out.stderr
    );
    assert!(
        !out.stderr.contains("hb_1"),
        "a value was printed: {}",
        out.stderr
    );
    assert!(!file.exists());
}

#[test]
fn a_url_file_that_holds_a_url_sends_nothing() {
    let keys = Keys::new();
    let api = crontap(&keys.client_id, &keys.crontap, CrontapAnswer::PingUrl);
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("x.url");
    assert_eq!(
        create(&keys, &api.url(), &file, &["--period", "1h"]).code,
        0
    );
    let kept = url_in(&file);
    let again = create(&keys, &api.url(), &file, &["--period", "1h"]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert!(again.stderr.contains("nothing changed"), "{}", again.stderr);
    assert_eq!(api.api_calls().len(), 1, "the second create sent a request");
    assert_eq!(url_in(&file), kept);
    assert_clean(&again, &keys, &[kept]);
}
