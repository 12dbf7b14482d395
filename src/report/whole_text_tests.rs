//! What the summary and the Healthchecks body send for output whose secrets are recognised
//! on one line and stand elsewhere too, or span lines: each case's output, then the exact
//! body lines and the exact summary detail (its last line). A leak fails a case, and so
//! does a neighbour changed. The secrets are ours, made up for these tests.

use crontap_scrub::Scrubber;

use super::body::{self, OutputTail};
use super::summary;

/// (what it is, the output, the output lines the body sends; the summary's detail is the
/// last of them).
const CASES: &[(&str, &str, &str)] = &[
    (
        "a value caught on one line, bare on the next",
        "db: connecting with password=Tq8vR3mXw2Lp\nretrying as app with Tq8vR3mXw2Lp\n",
        "db: connecting with password=[REDACTED]\nretrying as app with [REDACTED]",
    ),
    (
        "a tree-drawn variable dump (loguru, better_exceptions)",
        "    connect(host='db', password='Winter42harbor$')\n    │                           └ 'Winter42harbor$'\n    │                 └ 'Winter42harbor$'\n",
        "    connect(host='db', password='[REDACTED]')\n    │                           └ '[REDACTED]'\n    │                 └ '[REDACTED]'",
    ),
    (
        "the value's encodings: base64 of user:value and of \\0user\\0value, percent, JSON, shell, hex",
        "PGPASSWORD=Hx4/nB7&qZk2w psql -h db\nsent YXBwOkh4NC9uQjcmcVprMnc= and AGFwcABIeDQvbkI3JnFaazJ3\nurl /x/Hx4%2FnB7%26qZk2w/y\n{\"msg\": \"bad Hx4\\/nB7\\u0026qZk2w\"}\n+ run Hx4/nB7\\&qZk2w\nhex 4878342f6e423726715a6b3277 done\n",
        "PGPASSWORD=[REDACTED] psql -h db\nsent [REDACTED] and [REDACTED]\nurl /x/[REDACTED]/y\n{\"msg\": \"bad [REDACTED]\"}\n+ run [REDACTED]\nhex [REDACTED] done",
    ),
    (
        "a value a line break cut (stackprinter)",
        "    db = connect(password='Kd93mZqW7xPvR2tY')\n      value = 'Kd93mZqW\n               7xPvR2tY'\n",
        "    db = connect(password='[REDACTED]')\n      value = '[REDACTED]\n               [REDACTED]'",
    ),
    (
        "a YAML value on the line under its key",
        "database:\n  password:\n    Rm4kT8wQz2Nv\n  host: db\nauth failed for Rm4kT8wQz2Nv\n",
        "database:\n  password:\n    [REDACTED]\n  host: db\nauth failed for [REDACTED]",
    ),
    (
        "Spring Boot's binding report",
        "Failed to bind properties under 'app.mail.password' to java.lang.String:\n\n    Property: app.mail.password\n    Value: \"Zp7wQ3xKm9Lc\"\n    Origin: System Environment Property \"APP_MAIL_PASSWORD\"\n    Reason: login to Zp7wQ3xKm9Lc refused\n",
        "Failed to bind properties under 'app.mail.password' to java.lang.String:\n\n    Property: app.mail.password\n    Value: \"[REDACTED]\"\n    Origin: System Environment Property \"APP_MAIL_PASSWORD\"\n    Reason: login to [REDACTED] refused",
    ),
    (
        "SMTP AUTH LOGIN as smtplib prints it",
        "reply: b'334 UGFzc3dvcmQ6\\r\\n'\nreply: retcode (334); Msg: b'UGFzc3dvcmQ6'\nsend: 'V2ludGVyNDJoYXJib3Ik\\r\\n'\nreply: b'535 5.7.8 Error\\r\\n'\nretry with Winter42harbor$\n",
        "reply: b'334 UGFzc3dvcmQ6\\r\\n'\nreply: retcode (334); Msg: b'UGFzc3dvcmQ6'\nsend: '[REDACTED]\\r\\n'\nreply: b'535 5.7.8 Error\\r\\n'\nretry with [REDACTED]",
    ),
    (
        "SMTP AUTH LOGIN as swaks prints it; the user name stays",
        "<-  334 VXNlcm5hbWU6\n -> YXBw\n<-  334 UGFzc3dvcmQ6\n -> V2ludGVyNDJoYXJib3Ik\n<** 535 5.7.8 Error\n",
        "<-  334 VXNlcm5hbWU6\n -> YXBw\n<-  334 UGFzc3dvcmQ6\n -> [REDACTED]\n<** 535 5.7.8 Error",
    ),
];

fn scrubber() -> Scrubber {
    Scrubber::new(Vec::new(), Vec::new())
}

#[test]
fn the_body_sends_each_case_scrubbed_as_one_text() {
    for (name, output, want) in CASES {
        let tail = OutputTail {
            bytes: output.as_bytes(),
            cut: false,
        };
        let sent = body::build("exit 1 after 0s", &tail, &scrubber(), 100_000);
        assert_eq!(sent, format!("exit 1 after 0s\n{want}"), "{name}");
    }
}

#[test]
fn the_summary_detail_is_the_last_line_scrubbed_with_what_the_whole_tail_taught() {
    for (name, output, want) in CASES {
        let last = want.lines().last().unwrap_or_default().trim();
        for (stdout, stderr) in [("", *output), (*output, "")] {
            let sent = summary::failure_message_with(
                "exit 1 after 0s".to_owned(),
                stdout.as_bytes(),
                stderr.as_bytes(),
                &scrubber(),
                10_000,
            );
            assert_eq!(sent, format!("exit 1 after 0s: {last}"), "{name}");
        }
    }
}

#[test]
fn what_stdout_teaches_goes_from_the_stderr_line_picked() {
    let sent = summary::failure_message_with(
        "exit 1 after 0s".to_owned(),
        b"loaded token=Pf6nW2qXr8Kt\n",
        b"rejected Pf6nW2qXr8Kt\n",
        &scrubber(),
        10_000,
    );
    assert_eq!(sent, "exit 1 after 0s: rejected [REDACTED]");
}
