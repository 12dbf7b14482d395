//! The forms of issue 43 through what crontap-run sends: each row is a job's stderr as the
//! real program printed it here (with secrets made up for this file), and exactly the
//! failure summary and the Healthchecks body built from it, by the binary's own code, with
//! a scrubber that knows none of the credentials. A row fails on a leak and on a mangled
//! neighbour alike.

use std::ffi::OsString;

use crontap_run::report::{body, summary};
use crontap_scrub::Scrubber;

struct Row {
    stderr: &'static str,
    summary: &'static str,
    body: &'static str,
    /// What must not be in either, whatever the expected texts say.
    secret: &'static str,
}

fn sent(stderr: &str) -> (String, String) {
    let scrubber = Scrubber::new(
        ["https://hb.example/ping/quoted-back".to_owned()],
        Vec::<(OsString, OsString)>::new(),
    );
    sent_by(&scrubber, stderr)
}

/// How a row's texts differ from what it wants: its stderr, then each text (summary, body)
/// beside the one wanted.
pub fn mismatch(stderr: &str, summary: (&str, &str), body: (&str, &str)) -> String {
    format!(
        "\n  stderr:  {stderr:?}\n  summary: {:?}\n  want:    {:?}\n  body:    {:?}\n  want:    {:?}",
        summary.0, summary.1, body.0, body.1
    )
}

/// The failure summary and the Healthchecks body that a job failing with `stderr` (exit 1
/// after 2 s) makes, scrubbed by `scrubber`.
pub fn sent_by(scrubber: &Scrubber, stderr: &str) -> (String, String) {
    let summary = summary::failure_message_with(
        "exit 1 after 2s".into(),
        b"",
        stderr.as_bytes(),
        scrubber,
        256,
    );
    let tail = body::OutputTail {
        bytes: stderr.as_bytes(),
        cut: false,
    };
    let body = body::build(&summary, &tail, scrubber, 10_000);
    (summary, body)
}

const ROWS: &[Row] = &[
    Row {
        stderr: "psql: error: invalid integer value \"Kq8vN2xL\" for connection option \"port\"\n",
        summary: "exit 1 after 2s: psql: error: invalid integer value \"[REDACTED]\" for connection option \"port\"",
        body: "exit 1 after 2s: psql: error: invalid integer value \"[REDACTED]\" for connection option \"port\"\npsql: error: invalid integer value \"[REDACTED]\" for connection option \"port\"",
        secret: "Kq8vN2",
    },
    Row {
        stderr: "PHP Fatal error:  Uncaught PDOException: SQLSTATE[HY000] [2002] Connection refused in /app/job.php:3\nStack trace:\n#0 /app/job.php(3): PDO->__construct('mysql:host=127.0.0.1;port=1;dbname=a...', 'app', Object(SensitiveParameterValue), Array)\n#1 /app/job.php(7): connect('mysql:host=127.0.0.1;port=1;dbname=a...', 'app', 'Pa55#J8gvW8Yc.Unc')\n#2 /app/job.php(10): db()\n#3 {main}\n  thrown in /app/job.php on line 3\n",
        summary: "exit 1 after 2s: PHP Fatal error:  Uncaught PDOException: SQLSTATE[HY000] [2002] Connection refused in /app/job.php:3",
        body: "exit 1 after 2s: PHP Fatal error:  Uncaught PDOException: SQLSTATE[HY000] [2002] Connection refused in /app/job.php:3\nPHP Fatal error:  Uncaught PDOException: SQLSTATE[HY000] [2002] Connection refused in /app/job.php:3\nStack trace:\n#0 /app/job.php(3): PDO->__construct('mysql:host=127.0.0.1;port=1;dbname=a...', 'app', Object(SensitiveParameterValue), Array)\n#1 /app/job.php(7): connect('mysql:host=127.0.0.1;port=1;dbname=a...', 'app', '[REDACTED]')\n#2 /app/job.php(10): db()\n#3 {main}\n  thrown in /app/job.php on line 3",
        secret: "J8gvW8",
    },
    Row {
        stderr: "ldap_write: want=56, written=56\n  0020:  65 78 61 6d 70 6c 65 80  0f 4b 71 38 76 4e 32 78   example..Kq8vN2x  \n  0030:  4c 2f 52 74 35 70 51 39                            L/Rt5pQ9          \n",
        summary: "exit 1 after 2s: [hex dump]",
        body: "exit 1 after 2s: [hex dump]\nldap_write: want=56, written=56\n[hex dump]",
        secret: "Kq8vN2",
    },
    Row {
        stderr: "  File \"/app/job.py\", line 11, in main\n    connect(\"127.0.0.1\", 1, \"app\", db_password)\n    │                              └ 'Winter42harbor$'\n    └ <function connect at 0x7fc8fb1f4900>\n\nConnectionRefusedError: [Errno 111] Connection refused\n",
        summary: "exit 1 after 2s: ConnectionRefusedError: [Errno 111] Connection refused",
        body: "exit 1 after 2s: ConnectionRefusedError: [Errno 111] Connection refused\n  File \"/app/job.py\", line 11, in main\n    connect(\"127.0.0.1\", 1, \"app\", db_password)\n    │                              └ [REDACTED]\n    └ <function connect at 0x7fc8fb1f4900>\n\nConnectionRefusedError: [Errno 111] Connection refused",
        secret: "Winter42",
    },
    Row {
        stderr: "错误：数据库密码=Xk29fjQmLr，请检查配置\n",
        summary: "exit 1 after 2s: 错误：数据库密码=[REDACTED]，请检查配置",
        body: "exit 1 after 2s: 错误：数据库密码=[REDACTED]，请检查配置\n错误：数据库密码=[REDACTED]，请检查配置",
        secret: "Xk29fj",
    },
    Row {
        stderr: "+ docker login --username ci --password-stdin registry.example.com\nError: Cannot perform an interactive login from a non TTY device\n",
        summary: "exit 1 after 2s: Error: Cannot perform an interactive login from a non TTY device",
        body: "exit 1 after 2s: Error: Cannot perform an interactive login from a non TTY device\n+ docker login --username ci --password-stdin registry.example.com\nError: Cannot perform an interactive login from a non TTY device",
        secret: "no secret in this row",
    },
];

#[test]
fn issue_43_forms_leave_exactly_this_in_summary_and_body() {
    let mut failed = Vec::new();
    for row in ROWS {
        let (summary, body) = sent(row.stderr);
        let leaked = summary.contains(row.secret) || body.contains(row.secret);
        if leaked || summary != row.summary || body != row.body {
            failed.push(mismatch(
                row.stderr,
                (&summary, row.summary),
                (&body, row.body),
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
