//! Property tests of the scrubber and the summary builder: whatever the job printed,
//! building the summary never panics, never exceeds the bound, leaves no control
//! characters or known secrets, and scrubbing is idempotent.

use std::time::Duration;

use proptest::prelude::*;

use crontap_run::report::summary::failure_message;
use crontap_run::run::outcome::Outcome;
use crontap_scrub::Scrubber;

fn scrubber() -> Scrubber {
    Scrubber::new(
        vec!["prop-heartbeat-token".to_owned()],
        [("API_TOKEN".into(), "prop-env-secret".into())],
    )
}

/// Text built from fragments that exercise every layer, glued by arbitrary printable text,
/// line breaks, escapes and non-ASCII.
fn text() -> impl Strategy<Value = String> {
    let fragment = prop_oneof![
        "[ -~]{0,40}",
        Just("password=".to_owned()),
        Just("Authorization: Bearer ".to_owned()),
        Just("postgres://u:p@h/db ".to_owned()),
        Just("?access_token=".to_owned()),
        Just("\"api_key\": \"".to_owned()),
        Just("--token ".to_owned()),
        Just("ghp_".to_owned()),
        Just("-----BEGIN PRIVATE KEY-----\n".to_owned()),
        Just(
            "Traceback (most recent call last):\n  File \"x.py\", line 1, in <module>\n".to_owned()
        ),
        Just("\tat com.example.Main.main(Main.java:1)\n".to_owned()),
        Just("jane@example.com 4111 1111 1111 1111 +44 20 7946 0958 8.8.8.8 ".to_owned()),
        Just("[REDACTED]".to_owned()),
        // Triggers of provider families and the newer rules, so that half-tokens meet.
        prop::sample::select(vec![
            "sk-",
            "sk_live_",
            "AKIA",
            "xoxb-",
            "eyJ",
            "glpat-",
            "AAAA",
            "pat",
            "s.",
            "1//0",
            "hooks.slack.com/services/",
            "AccountKey=",
            "%40",
            "%3D",
            "password%3D",
            "machine h login u password ",
            "user:pw@tcp(",
            "a/b@//h",
            "app-1  | ",
            "2026-11-29T14:05:33Z ",
            "[SQL: ",
            "[parameters: ",
            "(Background on this error at: https://sqlalche.me/e/20/x)\n",
            "ssn ",
            "phone: 0",
            "iban de",
            "MAILGUN_KEY=",
            "<add key=\"Password\" value=\"",
        ])
        .prop_map(str::to_owned),
        Just("prop-heartbeat-token".to_owned()),
        Just("\x1b[31m\u{202e}\r\n".to_owned()),
        "[A-Za-z0-9+/=_-]{20,60}",
        "\\PC{0,20}",
    ];
    prop::collection::vec(fragment, 0..12).prop_map(|parts| parts.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn scrubbing_is_idempotent(input in text()) {
        let scrubber = scrubber();
        let once = scrubber.scrub(&input);
        prop_assert_eq!(scrubber.scrub(&once), once.clone());
        prop_assert!(!once.contains("prop-heartbeat-token"));
        prop_assert!(!once.contains("prop-env-secret"));
    }

    #[test]
    fn the_summary_is_bounded_and_clean(
        stdout in text(),
        stderr in text(),
        raw in prop::collection::vec(any::<u8>(), 0..300),
        max in 32usize..=2048,
        code in 1u8..=255,
    ) {
        let scrubber = scrubber();
        let mut stderr = stderr.into_bytes();
        stderr.extend_from_slice(&raw);
        let msg = failure_message(&Outcome::Exited(code), Duration::from_secs(3), stdout.as_bytes(), &stderr, &scrubber, max);
        prop_assert!(msg.len() <= max, "{} > {}", msg.len(), max);
        prop_assert!(!msg.chars().any(char::is_control), "{:?}", msg);
        let starts_with_exit = msg.starts_with(&format!("exit {code} after 3s"));
        prop_assert!(starts_with_exit, "{:?}", msg);
        prop_assert!(!msg.contains("prop-heartbeat-token"));
        prop_assert!(!msg.contains("prop-env-secret"));
    }
}
