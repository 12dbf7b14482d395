//! The whole-text pass's leaks that an attacker found, through what crontap-run sends: each
//! row is a job's stderr where a password named on one line stands again on another, hidden
//! (a hex dump, which is one line, `[hex dump]`, its bytes and text both; JSON `\u` escapes, hex in bytes, colour codes, a no-break space),
//! and exactly the failure summary and the Healthchecks body built from it, by the binary's
//! own code, with a scrubber that knows no secret. A row fails on a leak (any 8 characters
//! of the password) and on a mangled neighbour alike. The password is made up for this file.

use std::ffi::OsString;

use crontap_scrub::Scrubber;

const SECRET: &str = "Sup3rS3cretValue9";

struct Row {
    stderr: &'static str,
    summary: &'static str,
    body: &'static str,
}

fn sent(stderr: &str) -> (String, String) {
    let scrubber = Scrubber::new(Vec::<String>::new(), Vec::<(OsString, OsString)>::new());
    crate::quoted_back::sent_by(&scrubber, stderr)
}

const ROWS: &[Row] = &[
    // A hex dump's text column cut the value at 16 bytes.
    Row {
        stderr: "00000000: 5375 7033 7253 3363 7265 7456 616c 7565  Sup3rS3cretValue\nerror: login failed with password=Sup3rS3cretValue9\n",
        summary: "exit 1 after 2s: error: login failed with password=[REDACTED]",
        body: "exit 1 after 2s: error: login failed with password=[REDACTED]\n[hex dump]\nerror: login failed with password=[REDACTED]",
    },
    // Real dumps of a file holding the password (`xxd`, `hexdump -C`, `od -A x -t x1z`,
    // `od -t x1`, as this machine prints them) and `ldapsearch -d 2` dumping its bind
    // request: the bytes in hex spell it too, so each dump is one line.
    Row {
        stderr: "+ xxd /run/secrets/ldap.conf\n00000000: 646e 3a20 636e 3d61 646d 696e 2c64 633d  dn: cn=admin,dc=\n00000010: 636f 7270 0a70 6173 7377 6f72 643a 2053  corp.password: S\n00000020: 7570 3372 5333 6372 6574 5661 6c75 6539  up3rS3cretValue9\n00000030: 0a                                       .\nerror: bind refused\n",
        summary: "exit 1 after 2s: error: bind refused",
        body: "exit 1 after 2s: error: bind refused\n+ xxd /run/secrets/ldap.conf\n[hex dump]\nerror: bind refused",
    },
    Row {
        stderr: "+ hexdump -C /run/secrets/ldap.conf\n00000000  64 6e 3a 20 63 6e 3d 61  64 6d 69 6e 2c 64 63 3d  |dn: cn=admin,dc=|\n00000010  63 6f 72 70 0a 70 61 73  73 77 6f 72 64 3a 20 53  |corp.password: S|\n00000020  75 70 33 72 53 33 63 72  65 74 56 61 6c 75 65 39  |up3rS3cretValue9|\n00000030  0a                                                |.|\n00000031\n",
        summary: "exit 1 after 2s: [hex dump]",
        body: "exit 1 after 2s: [hex dump]\n+ hexdump -C /run/secrets/ldap.conf\n[hex dump]",
    },
    Row {
        stderr: "password=Sup3rS3cretValue9\n000000 64 6e 3a 20 63 6e 3d 61 64 6d 69 6e 2c 64 63 3d  >dn: cn=admin,dc=<\n000010 63 6f 72 70 0a 70 61 73 73 77 6f 72 64 3a 20 53  >corp.password: S<\n000020 75 70 33 72 53 33 63 72 65 74 56 61 6c 75 65 39  >up3rS3cretValue9<\n000030 0a                                               >.<\n000031\n0000000 64 6e 3a 20 63 6e 3d 61 64 6d 69 6e 2c 64 63 3d\n0000020 63 6f 72 70 0a 70 61 73 73 77 6f 72 64 3a 20 53\n0000040 75 70 33 72 53 33 63 72 65 74 56 61 6c 75 65 39\n0000060 0a\n0000061\nerror: bind refused\n",
        summary: "exit 1 after 2s: error: bind refused",
        body: "exit 1 after 2s: error: bind refused\npassword=[REDACTED]\n[hex dump]\n[hex dump]\nerror: bind refused",
    },
    Row {
        stderr: "ldap_write: want=47, written=47\n  0000:  30 2d 02 01 01 60 28 02  01 03 04 10 63 6e 3d 61   0-...`(.....cn=a  \n  0010:  64 6d 69 6e 2c 64 63 3d  63 6f 72 70 80 11 53 75   dmin,dc=corp..Su  \n  0020:  70 33 72 53 33 63 72 65  74 56 61 6c 75 65 39      p3rS3cretValue9   \nldap_read: want=8, got=8\n  0000:  30 0c 02 01 01 61 07 0a                            0....a..          \nldap_bind: Invalid credentials (49)\n",
        summary: "exit 1 after 2s: ldap_bind: Invalid credentials (49)",
        body: "exit 1 after 2s: ldap_bind: Invalid credentials (49)\nldap_write: want=47, written=47\n[hex dump]\nldap_read: want=8, got=8\n[hex dump]\nldap_bind: Invalid credentials (49)",
    },
    // Lines that only start with a number stay.
    Row {
        stderr: "1024  bytes written\n2026: 12 07 18 13  deploy started\nerror: disk full\n",
        summary: "exit 1 after 2s: error: disk full",
        body: "exit 1 after 2s: error: disk full\n1024  bytes written\n2026: 12 07 18 13  deploy started\nerror: disk full",
    },
    // JSON `\u` escapes, one and all.
    Row {
        stderr: "password=Sup3rS3cretValue9\nerror: rejected {\"p\": \"Sup3rS3cret\\u0056alue9\", \"user\": \"app\"}\n",
        summary: "exit 1 after 2s: error: rejected {\"p\": \"[REDACTED]\", \"user\": \"app\"}",
        body: "exit 1 after 2s: error: rejected {\"p\": \"[REDACTED]\", \"user\": \"app\"}\npassword=[REDACTED]\nerror: rejected {\"p\": \"[REDACTED]\", \"user\": \"app\"}",
    },
    Row {
        stderr: "password=Sup3rS3cretValue9\nerror: rejected {\"p\": \"\\u0053\\u0075\\u0070\\u0033\\u0072\\u0053\\u0033\\u0063\\u0072\\u0065\\u0074\\u0056\\u0061\\u006c\\u0075\\u0065\\u0039\"}\n",
        summary: "exit 1 after 2s: error: rejected {\"p\": \"[REDACTED]\"}",
        body: "exit 1 after 2s: error: rejected {\"p\": \"[REDACTED]\"}\npassword=[REDACTED]\nerror: rejected {\"p\": \"[REDACTED]\"}",
    },
    // Hex split by spaces and colons.
    Row {
        stderr: "password=Sup3rS3cretValue9\nerror: sent 53757033725333637265745661 6c756539 to server\n",
        summary: "exit 1 after 2s: error: sent [REDACTED] to server",
        body: "exit 1 after 2s: error: sent [REDACTED] to server\npassword=[REDACTED]\nerror: sent [REDACTED] to server",
    },
    Row {
        stderr: "password=Sup3rS3cretValue9\nerror: sent 53:75:70:33:72:53:33:63:72:65:74:56:61:6c:75:65:39 to server\n",
        summary: "exit 1 after 2s: error: sent [REDACTED] to server",
        body: "exit 1 after 2s: error: sent [REDACTED] to server\npassword=[REDACTED]\nerror: sent [REDACTED] to server",
    },
    // Colour codes inside the value, on one line and across two.
    Row {
        stderr: "password=Sup3rS3cretValue9\nSup3rS3cret\u{1b}[0m\nValue9\nerror: login failed\n",
        summary: "exit 1 after 2s: error: login failed",
        body: "exit 1 after 2s: error: login failed\npassword=[REDACTED]\n[REDACTED]\n[REDACTED]\nerror: login failed",
    },
    Row {
        stderr: "password=Sup3rS3cretValue9\nerror: bad login Sup3rS3cret\u{1b}[0mValue9\n",
        summary: "exit 1 after 2s: error: bad login [REDACTED]",
        body: "exit 1 after 2s: error: bad login [REDACTED]\npassword=[REDACTED]\nerror: bad login [REDACTED]",
    },
    // A no-break space inside the value.
    Row {
        stderr: "password=Sup3rS3cretValue9\nerror: login Sup3rS3cret\u{a0}Value9 refused\n",
        summary: "exit 1 after 2s: error: login [REDACTED] refused",
        body: "exit 1 after 2s: error: login [REDACTED] refused\npassword=[REDACTED]\nerror: login [REDACTED] refused",
    },
    // A password said in plain English, and English about one.
    Row {
        stderr: "+ echo 'svc:Sup3rS3cretValue9' | chpasswd\nThe password is Sup3rS3cretValue9\n",
        summary: "exit 1 after 2s: The password is [REDACTED]",
        body: "exit 1 after 2s: The password is [REDACTED]\n+ echo 'svc:[REDACTED]' | chpasswd\nThe password is [REDACTED]",
    },
    Row {
        stderr: "password was set to expire\nerror: the password is wrong\n",
        summary: "exit 1 after 2s: error: the password is wrong",
        body: "exit 1 after 2s: error: the password is wrong\npassword was set to expire\nerror: the password is wrong",
    },
];

/// A value printed wrapped onto the next line before the line that teaches it with its name
/// (`api_key=…`): the head before the line break goes as well as the rest after it.
#[test]
fn both_pieces_of_a_wrapped_value_leave_exactly_this() {
    const VALUE: &str = "Quartz68copper!Meadow88winter!Winter76river!Silver94falcon!";
    let row = Row {
        stderr: "error: token rejected: Quartz68copper!Meadow88winter!\nWinter76river!Silver94falcon!\nauth: api_key=Quartz68copper!Meadow88winter!Winter76river!Silver94falcon!\n",
        summary: "exit 1 after 2s: auth: [REDACTED]",
        body: "exit 1 after 2s: auth: [REDACTED]\nerror: token rejected: [REDACTED]\n[REDACTED]\nauth: [REDACTED]",
    };
    let (summary, body) = sent(row.stderr);
    let leaked = (0..=VALUE.len() - 8)
        .any(|i| summary.contains(&VALUE[i..i + 8]) || body.contains(&VALUE[i..i + 8]));
    assert!(
        !leaked && summary == row.summary && body == row.body,
        "{}",
        crate::quoted_back::mismatch(row.stderr, (&summary, row.summary), (&body, row.body))
    );
}

#[test]
fn hidden_copies_of_a_learned_password_leave_exactly_this_in_summary_and_body() {
    let mut failed = Vec::new();
    for row in ROWS {
        let (summary, body) = sent(row.stderr);
        let leaked = (0..=SECRET.len() - 8)
            .any(|i| summary.contains(&SECRET[i..i + 8]) || body.contains(&SECRET[i..i + 8]));
        if leaked || summary != row.summary || body != row.body {
            failed.push(crate::quoted_back::mismatch(
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
