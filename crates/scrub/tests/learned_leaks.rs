//! Leaks of the whole-text pass that an attacker found, one row each: a value learned on
//! one line (`password=…`) and written again elsewhere in a way that hid it (a hex dump
//! that cut it, JSON `\u` escapes, hex printed a byte or two at a time, colour codes, a
//! no-break space). Each row is the text and exactly what the scrubber must leave of it,
//! with no known secrets, so a row fails on a leak and on a mangled neighbour alike. The
//! secret is made up for this file.

use std::ffi::OsString;

use crontap_scrub::Scrubber;

mod support;

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
    support::assert_no_row_failed(&failed);
}

#[test]
fn a_value_a_hex_dump_cut_short_leaves_no_tail() {
    check(&[(
        "password=Sup3rS3cretValue9\n00000000: 5375 7033 7253 3363 7265 7456 616c 7565  Sup3rS3cretValue\n",
        "password=[REDACTED]\n[hex dump]\n",
    )]);
}

/// A file holding a generated password (`dn: cn=admin,dc=corp` then `password:
/// Wq7%nZ2rLx9!vKe4`) dumped by this machine's `xxd`, `hexdump -C`, `od -A x -t x1z`, `od -c`
/// and `od -t x1`, and OpenLDAP's `ldapsearch -d 2` dumping its bind request: the dump's
/// bytes in hex spell the password as plainly as its text column, so the dump becomes one
/// line, `[hex dump]`, and the lines around it stay as they were.
#[test]
fn real_hex_dumps_of_a_password_become_one_line() {
    const DUMPS: &[&str] = &[
        "00000000: 646e 3a20 636e 3d61 646d 696e 2c64 633d  dn: cn=admin,dc=\n00000010: 636f 7270 0a70 6173 7377 6f72 643a 2057  corp.password: W\n00000020: 7137 256e 5a32 724c 7839 2176 4b65 340a  q7%nZ2rLx9!vKe4.\n",
        "00000000  64 6e 3a 20 63 6e 3d 61  64 6d 69 6e 2c 64 63 3d  |dn: cn=admin,dc=|\n00000010  63 6f 72 70 0a 70 61 73  73 77 6f 72 64 3a 20 57  |corp.password: W|\n00000020  71 37 25 6e 5a 32 72 4c  78 39 21 76 4b 65 34 0a  |q7%nZ2rLx9!vKe4.|\n00000030\n",
        "000000 64 6e 3a 20 63 6e 3d 61 64 6d 69 6e 2c 64 63 3d  >dn: cn=admin,dc=<\n000010 63 6f 72 70 0a 70 61 73 73 77 6f 72 64 3a 20 57  >corp.password: W<\n000020 71 37 25 6e 5a 32 72 4c 78 39 21 76 4b 65 34 0a  >q7%nZ2rLx9!vKe4.<\n000030\n",
        "0000000   d   n   :       c   n   =   a   d   m   i   n   ,   d   c   =\n0000020   c   o   r   p  \\n   p   a   s   s   w   o   r   d   :       W\n0000040   q   7   %   n   Z   2   r   L   x   9   !   v   K   e   4  \\n\n0000060\n",
        "0000000 64 6e 3a 20 63 6e 3d 61 64 6d 69 6e 2c 64 63 3d\n0000020 63 6f 72 70 0a 70 61 73 73 77 6f 72 64 3a 20 57\n0000040 71 37 25 6e 5a 32 72 4c 78 39 21 76 4b 65 34 0a\n0000060\n",
        "ldap_write: want=46, written=46\n  0000:  30 2c 02 01 01 60 27 02  01 03 04 10 63 6e 3d 61   0,...`'.....cn=a  \n  0010:  64 6d 69 6e 2c 64 63 3d  63 6f 72 70 80 10 57 71   dmin,dc=corp..Wq  \n  0020:  37 25 6e 5a 32 72 4c 78  39 21 76 4b 65 34         7%nZ2rLx9!vKe4    \n",
    ];
    let s = Scrubber::new(Vec::<String>::new(), Vec::<(OsString, OsString)>::new());
    let mut failed = Vec::new();
    for dump in DUMPS {
        // The dump alone between two lines, and after the password was printed.
        let head = match dump.starts_with("ldap_write") {
            true => &dump[..=dump.find('\n').unwrap()],
            false => "",
        };
        let rows = [
            (
                format!(
                    "$ xxd /run/secrets/ldap.conf\n{dump}ldap_bind: Invalid credentials (49)\n"
                ),
                format!(
                    "$ xxd /run/secrets/ldap.conf\n{head}[hex dump]\nldap_bind: Invalid credentials (49)\n"
                ),
            ),
            (
                format!("bind failed, password: Wq7%nZ2rLx9!vKe4\n{dump}"),
                format!("bind failed, password: [REDACTED]\n{head}[hex dump]\n"),
            ),
        ];
        for (text, want) in rows {
            let got = s.scrub(&text);
            if got != want || s.scrub(&got) != got {
                failed.push(format!(
                    "\n  text: {text:?}\n  want: {want:?}\n  got:  {got:?}"
                ));
            }
        }
    }
    support::assert_no_row_failed(&failed);
}

/// What only looks like a dump stays: lines that start with a number, one line of hex
/// without a text column.
#[test]
fn lines_like_a_dump_stay() {
    let s = Scrubber::new(Vec::<String>::new(), Vec::<(OsString, OsString)>::new());
    for text in [
        "2026: 12 07 18 13  deploy started\n2027: 12 07 18 13  deploy started\n",
        "0000000 64 6e 3a 20 63 6e 3d 61 64 6d 69 6e 0a 70 61 73\nexit status 1\n",
        "1024  bytes written\n0020 files copied\n",
    ] {
        assert_eq!(s.scrub(text), text);
    }
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

/// A value a form found (here a URL parser's "port") goes wherever else it stands, as a
/// whole word: glued inside a longer word, the whole word goes, neither cut mid-way nor
/// leaving a head or a tail; punctuation still ends the word, so what follows it stays.
#[test]
fn a_found_value_goes_elsewhere_as_a_whole_word() {
    check(&[
        (
            "ValueError: Port could not be cast to integer value as 'Sup3rS3cretValue9'\nresolving dbSup3rS3cretValue9x.internal\n",
            "ValueError: Port could not be cast to integer value as '[REDACTED]'\nresolving [REDACTED].internal\n",
        ),
        (
            "ValueError: Port could not be cast to integer value as 'Sup3rS3cretValue9'\ncp Sup3rS3cretValue9-backup.tar /srv\n",
            "ValueError: Port could not be cast to integer value as '[REDACTED]'\ncp [REDACTED]-backup.tar /srv\n",
        ),
    ]);
}

/// A value printed wrapped onto the next line, before the line that teaches it (with its
/// name, `api_key=…`): both pieces go, the head before the break as well as the rest.
#[test]
fn both_pieces_of_a_value_a_line_break_cut_go() {
    check(&[(
        "error: token rejected: Quartz68copper!Meadow88winter!\nWinter76river!Silver94falcon!\nauth: api_key=Quartz68copper!Meadow88winter!Winter76river!Silver94falcon!\n",
        "error: token rejected: [REDACTED]\n[REDACTED]\nauth: [REDACTED]\n",
    )]);
}
