//! Every way `heartbeat create` can fail: refusals (401 from the stand-in's own key check,
//! 403, 404, 500 with the service's message), answers that are not JSON or lack the URL, an
//! API that refuses connections, a missing key, and URL files reached through a link. Each
//! is exit 125 with one line, no file left behind, and no key or URL printed.

use std::os::unix::fs::symlink;
use std::path::Path;

use super::stand_in::{CrontapAnswer, crontap, healthchecks};
use super::{Keys, assert_clean, assert_one_line_error};
use crate::harness::{Crontap, Output};

fn hc_create(keys: &Keys, api: &str, file: &Path) -> Output {
    super::run(
        keys,
        &[
            "heartbeat",
            "create",
            "--service",
            "healthchecks",
            "--api-url",
            api,
            "--name",
            "job",
            "--period",
            "1h",
            "--url-file",
            file.to_str().unwrap(),
        ],
    )
}

#[test]
fn a_wrong_key_is_the_services_401_in_one_line() {
    let keys = Keys::new();
    let api = healthchecks("the-right-key-0123456789");
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("d/job.url");
    let out = hc_create(&keys, &api.url(), &file);
    assert_one_line_error(&out);
    assert!(
        out.stderr.contains("401 Unauthorized: wrong api key"),
        "{}",
        out.stderr
    );
    assert!(!file.exists() && !file.parent().unwrap().exists());
    let crontap_api = crontap("another-client", "another-key", CrontapAnswer::PingUrl);
    let out = super::run(
        &keys,
        &[
            "heartbeat",
            "create",
            "--api-url",
            &crontap_api.url(),
            "--name",
            "job",
            "--period",
            "1h",
            "--url-file",
            file.to_str().unwrap(),
        ],
    );
    assert_one_line_error(&out);
    assert!(
        out.stderr.contains("401 Unauthorized: invalid credentials"),
        "{}",
        out.stderr
    );
    assert!(!file.exists());
}

#[test]
fn refusals_say_the_status_and_the_scrubbed_message_and_leave_no_file() {
    let keys = Keys::new();
    let api = healthchecks(&keys.healthchecks);
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("job.url");
    // The message quotes the key back, as a careless server might: it must be scrubbed.
    let cases = [
        (
            403,
            format!(
                r#"{{"error": "check limit reached for key {}"}}"#,
                keys.healthchecks
            ),
            "403 Forbidden: check limit reached",
        ),
        (
            404,
            r#"{"error": "not found"}"#.to_owned(),
            "404 Not Found: not found",
        ),
        (
            500,
            "Internal Server Error\n<html>".to_owned(),
            "500 Internal Server Error: Internal Server Error",
        ),
        (
            400,
            r#"{"error": "json validation error"}"#.to_owned(),
            "400 Bad Request: json validation error",
        ),
    ];
    for (status, body, said) in cases {
        api.answer_with(status, &body);
        let out = hc_create(&keys, &api.url(), &file);
        assert_one_line_error(&out);
        assert!(out.stderr.contains(said), "{status}: {}", out.stderr);
        assert!(!file.exists(), "{status} left a file");
    }
}

#[test]
fn answers_that_are_not_json_or_lack_the_url_are_errors() {
    let keys = Keys::new();
    let api = healthchecks(&keys.healthchecks);
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("job.url");
    let secret_uuid = "0b7e0a3c-6f1d-4e55-9f0c-2a7d5c1e9b11";
    let cases = [
        ("<html>ok</html>".to_owned(), "is not JSON"),
        (
            r#"["a list"]"#.to_owned(),
            "no ping_url field (it had: none)",
        ),
        (
            format!(r#"{{"name": "job", "uuid": "{secret_uuid}"}}"#),
            "no ping_url field (it had: name, uuid)",
        ),
        (
            r#"{"ping_url": 17}"#.to_owned(),
            "does not have the documented fields",
        ),
        (
            r#"{"ping_url": "ftp://x/y"}"#.to_owned(),
            "must be an http or https URL",
        ),
    ];
    for (body, said) in cases {
        api.answer_with(201, &body);
        let out = hc_create(&keys, &api.url(), &file);
        assert_one_line_error(&out);
        assert!(out.stderr.contains(said), "{body}: {}", out.stderr);
        assert_clean(&out, &keys, &[secret_uuid.to_owned()]);
        assert!(!file.exists());
    }
}

#[test]
fn an_api_that_refuses_connections_is_named_by_the_step_that_failed() {
    let keys = Keys::new();
    let refused = crate::harness::refused_url();
    let base = refused.split("/ping/").next().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("job.url");
    let out = hc_create(&keys, base, &file);
    assert_one_line_error(&out);
    assert!(
        out.stderr.contains("cannot reach the Healthchecks API"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("connect: FAILED"), "{}", out.stderr);
    assert!(!file.exists());
}

/// The `--service` arguments, the variables set, and what the error says.
type Case<'a> = (&'a [&'a str], &'a [(&'a str, &'a str)], &'a str);

#[test]
fn a_missing_key_names_its_variable() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("job.url");
    let api = healthchecks("k");
    let cases: [Case; 4] = [
        (
            &["--service", "healthchecks"],
            &[],
            "HEALTHCHECKS_API_KEY is not set",
        ),
        (
            &[],
            &[("CRONTAP_API_KEY", "k-123456789")],
            "CRONTAP_CLIENT_ID is not set",
        ),
        (
            &[],
            &[("CRONTAP_CLIENT_ID", "c-123456789")],
            "CRONTAP_API_KEY is not set",
        ),
        // Empty counts as unset.
        (
            &["--service", "healthchecks"],
            &[("HEALTHCHECKS_API_KEY", "")],
            "HEALTHCHECKS_API_KEY is not set",
        ),
    ];
    for (service, env, said) in cases {
        let mut c = Crontap::new();
        for (name, value) in env {
            c.env(name, value);
        }
        let out = c
            .args([
                "heartbeat",
                "create",
                "--api-url",
                &api.url(),
                "--name",
                "job",
            ])
            .args(service)
            .args(["--period", "1h", "--url-file", file.to_str().unwrap()])
            .run();
        assert_one_line_error(&out);
        assert!(out.stderr.contains(said), "{said}: {}", out.stderr);
    }
    assert!(api.seen().is_empty());
    assert!(!file.exists());
}

#[test]
fn url_files_are_never_reached_through_a_link() {
    let keys = Keys::new();
    let api = healthchecks(&keys.healthchecks);
    let tmp = tempfile::tempdir().unwrap();
    let victim = tmp.path().join("victim");
    std::fs::write(&victim, "keep me\n").unwrap();
    // The file itself a link.
    let linked = tmp.path().join("job.url");
    symlink(&victim, &linked).unwrap();
    let out = hc_create(&keys, &api.url(), &linked);
    assert_one_line_error(&out);
    assert!(out.stderr.contains("job.url"), "{}", out.stderr);
    // A directory on the way a link.
    let real = tmp.path().join("real");
    std::fs::create_dir(&real).unwrap();
    let link_dir = tmp.path().join("via");
    symlink(&real, &link_dir).unwrap();
    let out = hc_create(&keys, &api.url(), &link_dir.join("job.url"));
    assert_one_line_error(&out);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me\n");
    assert_eq!(std::fs::read_dir(&real).unwrap().count(), 0);
    assert!(
        api.seen().is_empty(),
        "sent although the file could not be kept"
    );
}
