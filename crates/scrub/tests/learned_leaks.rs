//! Leaks of the whole-text pass that an attacker found, one row each: a value learned on
//! one line (`password=…`) and written again elsewhere in a way that hid it (a hex dump
//! that cut it, JSON `\u` escapes, hex printed a byte or two at a time, colour codes, a
//! no-break space). Each row is the text and exactly what the scrubber must leave of it,
//! with no known secrets, so a row fails on a leak and on a mangled neighbour alike. The
//! secret is made up for this file.

use std::ffi::OsString;

use crontap_scrub::Scrubber;

const SECRET: &str = "Sup3rS3cretValue9";

/// Asserts every row, and reports all failing rows at once; also that the result holds no
/// 8-character piece of the secret and scrubs to itself.
fn check(rows: &[(&str, &str)]) {
    let s = Scrubber::new(Vec::<String>::new(), Vec::<(OsString, OsString)>::new());
    let mut failed = Vec::new();
    for (text, want) in rows {
        let got = s.scrub(text);
        let leaked = (0..=SECRET.len() - 8).any(|i| got.contains(&SECRET[i..i + 8]));
        let again = s.scrub(&got);
        if got != *want || leaked || again != got {
            failed.push(format!(
                "\n  text: {text:?}\n  want: {want:?}\n  got:  {got:?}\n  again: {again:?}"
            ));
        }
    }
    assert!(
        failed.is_empty(),
        "{} rows failed:{}",
        failed.len(),
        failed.concat()
    );
}

#[test]
fn a_value_a_hex_dump_cut_short_leaves_no_tail() {
    check(&[(
        "password=Sup3rS3cretValue9\n00000000: 5375 7033 7253 3363 7265 7456 616c 7565  Sup3rS3cretValue\n",
        "password=[REDACTED]\n00000000: 5375 7033 7253 3363 7265 7456 616c 7565  [REDACTED]\n",
    )]);
}

#[test]
fn json_unicode_escapes_hide_nothing() {
    check(&[
        (
            "password=Sup3rS3cretValue9\n{\"p\": \"Sup3rS3cret\\u0056alue9\"}\n",
            "password=[REDACTED]\n{\"p\": \"[REDACTED]\"}\n",
        ),
        (
            "password=Sup3rS3cretValue9\n{\"p\": \"\\u0053\\u0075\\u0070\\u0033\\u0072\\u0053\\u0033\\u0063\\u0072\\u0065\\u0074\\u0056\\u0061\\u006c\\u0075\\u0065\\u0039\", \"u\": \"app\"}\n",
            "password=[REDACTED]\n{\"p\": \"[REDACTED]\", \"u\": \"app\"}\n",
        ),
        (
            "password=Sup3rS3cretValue9\n{\"p\": \"\\u0053up3rS3cretValu\\u00659\"}\n",
            "password=[REDACTED]\n{\"p\": \"[REDACTED]\"}\n",
        ),
        // Escapes of other text stay as they are.
        (
            "password=Sup3rS3cretValue9\n{\"msg\": \"caf\\u00e9 \\u2013 ok\"}\n",
            "password=[REDACTED]\n{\"msg\": \"caf\\u00e9 \\u2013 ok\"}\n",
        ),
    ]);
}

#[test]
fn hex_printed_in_bytes_is_still_the_value() {
    check(&[
        (
            "password=Sup3rS3cretValue9\nx 53757033725333637265745661 6c756539 y\n",
            "password=[REDACTED]\nx [REDACTED] y\n",
        ),
        (
            "password=Sup3rS3cretValue9\nx 53 75 70 33 72 53 33 63 72 65 74 56 61 6c 75 65 39 y\n",
            "password=[REDACTED]\nx [REDACTED] y\n",
        ),
        (
            "password=Sup3rS3cretValue9\nx 53:75:70:33:72:53:33:63:72:65:74:56:61:6c:75:65:39 y\n",
            "password=[REDACTED]\nx [REDACTED] y\n",
        ),
        (
            "password=Sup3rS3cretValue9\nsent 5375 7033 7253 3363 7265 7456 616c 7565 39\n",
            "password=[REDACTED]\nsent [REDACTED]\n",
        ),
        // Other hex in bytes stays.
        (
            "password=Sup3rS3cretValue9\nmac 52:54:00:12:34:56 up\n",
            "password=[REDACTED]\nmac 52:54:00:12:34:56 up\n",
        ),
    ]);
}

#[test]
fn colour_codes_inside_a_value_hide_nothing() {
    check(&[
        (
            "password=Sup3rS3cretValue9\nSup3rS3cret\u{1b}[0m\nValue9\n",
            "password=[REDACTED]\n[REDACTED]\u{1b}[0m\n[REDACTED]\n",
        ),
        (
            "password=Sup3rS3cretValue9\nSup3rS3cret\u{1b}[0mValue9\n",
            "password=[REDACTED]\n[REDACTED]\n",
        ),
        (
            "password=Sup3rS3cretValue9\nx \u{1b}[1;31mSup3r\u{1b}[0mS3cret\u{1b}]0;t\u{7}Value9 y\n",
            "password=[REDACTED]\nx \u{1b}[1;31m[REDACTED] y\n",
        ),
        // Colour around other text stays.
        (
            "password=Sup3rS3cretValue9\n\u{1b}[31mERROR\u{1b}[0m job failed\n",
            "password=[REDACTED]\n\u{1b}[31mERROR\u{1b}[0m job failed\n",
        ),
    ]);
}

#[test]
fn a_no_break_space_inside_a_value_hides_nothing() {
    check(&[
        (
            "password=Sup3rS3cretValue9\nx Sup3rS3cret\u{a0}Value9 y\n",
            "password=[REDACTED]\nx [REDACTED] y\n",
        ),
        (
            "password=Sup3rS3cretValue9\nx Sup3r\u{202f}S3cret\u{200b}Value9 y\n",
            "password=[REDACTED]\nx [REDACTED] y\n",
        ),
        (
            "password=Sup3rS3cretValue9\nprix\u{a0}: 12\u{a0}€\n",
            "password=[REDACTED]\nprix\u{a0}: 12\u{a0}€\n",
        ),
    ]);
}

#[test]
fn a_password_said_in_plain_english_goes() {
    check(&[
        (
            "The password is Sup3rS3cretValue9",
            "The password is [REDACTED]",
        ),
        (
            "password was set to 'Sup3rS3cretValue9'",
            "password was set to '[REDACTED]'",
        ),
        (
            "+ echo 'svc:Sup3rS3cretValue9' | chpasswd",
            "+ echo 'svc:[REDACTED]' | chpasswd",
        ),
        // And everywhere else it stands.
        (
            "The password is Sup3rS3cretValue9.\nretrying with Sup3rS3cretValue9",
            "The password is [REDACTED].\nretrying with [REDACTED]",
        ),
        // English about a password stays.
        ("the password is wrong", "the password is wrong"),
        ("password was set to expire", "password was set to expire"),
        (
            "The password is incorrect. Password is required.",
            "The password is incorrect. Password is required.",
        ),
        (
            "echo done | chpasswd; password has been set to expire in 30 days",
            "echo done | chpasswd; password has been set to expire in 30 days",
        ),
    ]);
}
