//! The forms of DESIGN.md "Scrubbing" that issue 43 added, one row each, as the real
//! programs printed them on this machine (psql 15, Python 3.11, Go 1.19, PHP 8.2,
//! redis-cli 7.0, OpenLDAP 2.5, xxd, util-linux, coreutils): a parser quoting a password's
//! piece back as a port, PHP frame arguments, a redis-cli "host" holding a password's piece,
//! credential words of other languages and scripts, password switches that take no value,
//! and hex dumps. Each row is the text and exactly what the scrubber must leave of it, so a
//! row fails on a leak and on a mangled neighbour alike. The secrets are made up here.

use std::ffi::OsString;

use crontap_scrub::{Scrubber, collapse_traces};

mod support;

fn scrubber() -> Scrubber {
    Scrubber::new(
        ["https://hb.example/ping/quoted-back-check".to_owned()],
        Vec::<(OsString, OsString)>::new(),
    )
}

/// Asserts every row, and reports all failing rows at once.
fn check(rows: &[(&str, &str)]) {
    let s = scrubber();
    let failed: Vec<String> = rows
        .iter()
        .filter_map(|(text, want)| {
            let got = s.scrub(text);
            let stable = s.scrub(&got) == got;
            (got != *want || !stable)
                .then(|| format!("\n  text: {text:?}\n  want: {want:?}\n  got:  {got:?}"))
        })
        .collect();
    support::assert_no_row_failed(&failed);
}

#[test]
fn a_password_piece_a_parser_quotes_as_the_port_goes() {
    check(&[
        // psql 'postgresql://app:Kq8vN2xL/Rt5pQ9@127.0.0.1:5432/app'
        (
            "psql: error: invalid integer value \"Kq8vN2xL\" for connection option \"port\"",
            "psql: error: invalid integer value \"[REDACTED]\" for connection option \"port\"",
        ),
        // urllib.parse.urlsplit('postgresql://app:Kq8vN2xL/Rt5pQ9@db:5432/app').port
        (
            "ValueError: Port could not be cast to integer value as 'Kq8vN2xL'",
            "ValueError: Port could not be cast to integer value as '[REDACTED]'",
        ),
        // a `#` in the password ends the authority too
        (
            "ValueError: Port could not be cast to integer value as 'Wd4q'",
            "ValueError: Port could not be cast to integer value as '[REDACTED]'",
        ),
        // net/url.Parse("redis://svc:Kq8vN2xL/Rt5pQ9@cache:6379/0")
        (
            "config: parse \"redis://svc:Kq8vN2xL/Rt5pQ9@cache:6379/0\": invalid port \":Kq8vN2xL\" after host",
            "config: parse \"redis://[REDACTED]@cache:6379/0\": invalid port \":[REDACTED]\" after host",
        ),
        // net/url.Parse("postgres://app:Meadow48/Thistle48river"), no `@`: the rest of the
        // password is the URL's path, up to the quote
        (
            "error: parse \"postgres://app:Meadow48/Thistle48river\": invalid port \":Meadow48\" after host",
            "error: parse \"postgres://app:[REDACTED]\": invalid port \":[REDACTED]\" after host",
        ),
        // and with a `#` in it
        (
            "error: parse \"postgres://app:Meadow48#Thistle48river\": invalid port \":Meadow48\" after host",
            "error: parse \"postgres://app:[REDACTED]\": invalid port \":[REDACTED]\" after host",
        ),
        // Look-alikes: a port typed wrong in digits, another option, the source line.
        (
            "error: parse \"http://svc:8080/health\": invalid port \":8080\" after host",
            "error: parse \"http://svc:8080/health\": invalid port \":8080\" after host",
        ),
        (
            "psql: error: invalid integer value \"99999\" for connection option \"port\"",
            "psql: error: invalid integer value \"99999\" for connection option \"port\"",
        ),
        (
            "psql: error: invalid integer value \"ten\" for connection option \"connect_timeout\"",
            "psql: error: invalid integer value \"ten\" for connection option \"connect_timeout\"",
        ),
        (
            "    raise ValueError(f\"Port could not be cast to integer value as {port!r}\")",
            "    raise ValueError(f\"Port could not be cast to integer value as {port!r}\")",
        ),
        (
            "ValueError: Port out of range 0-65535",
            "ValueError: Port out of range 0-65535",
        ),
    ]);
}

#[test]
fn php_frame_arguments_lose_the_password() {
    check(&[
        // PHP 8.1 and older print PDO's password; 8.2 marks it sensitive.
        (
            "#0 /app/db.php(12): PDO->__construct('mysql:host=db;d...', 'app', 'Xk29fjQmLr')",
            "#0 /app/db.php(12): PDO->__construct('mysql:host=db;d...', 'app', '[REDACTED]')",
        ),
        // a wrapper of one's own, known by the DSN it is given (php -d
        // zend.exception_ignore_args=0 -d zend.exception_string_param_max_len=15)
        (
            "#0 /tmp/pdo2.php(6): connect('mysql:host=127....', 'app', 'Xk29fjQmLr/q+8=')",
            "#0 /tmp/pdo2.php(6): connect('mysql:host=127....', 'app', '[REDACTED]')",
        ),
        (
            "#0 Command line code(1): mysqli_connect('127.0.0.1', 'app', 'Xk29fjQmLr', 'app', 1)",
            "#0 Command line code(1): mysqli_connect('127.0.0.1', 'app', '[REDACTED]', 'app', 1)",
        ),
        (
            "#1 /srv/app/src/Db.php(40): mysqli->real_connect('db', 'app', 'Xk29fjQmLr', 'app')",
            "#1 /srv/app/src/Db.php(40): mysqli->real_connect('db', 'app', '[REDACTED]', 'app')",
        ),
        (
            "#0 /tmp/pdo2.php(3): PDO->__construct('...', '...', Object(SensitiveParameterValue))",
            "#0 /tmp/pdo2.php(3): PDO->__construct('...', '...', Object(SensitiveParameterValue))",
        ),
        (
            "#1 /app/run.php(8): import('customers.csv', 'app', 'daily')",
            "#1 /app/run.php(8): import('customers.csv', 'app', 'daily')",
        ),
    ]);
}

#[test]
fn a_redis_host_made_of_a_password_piece_goes() {
    check(&[
        // redis-cli -u 'redis://default:Kq8v@N2xLRt5pQ9@127.0.0.1:6390/0' ping
        (
            "Could not connect to Redis at N2xLRt5pQ9@127.0.0.1:6390: Name or service not known",
            "Could not connect to Redis at [REDACTED]@127.0.0.1:6390: Name or service not known",
        ),
        (
            "Could not connect to Redis at 127.0.0.1:6390: Connection refused",
            "Could not connect to Redis at 127.0.0.1:6390: Connection refused",
        ),
        (
            "LINE 1: SELECT id FROM users WHERE password = 'Xk29fjQmLr'",
            "LINE 1: SELECT id FROM users WHERE password = '[REDACTED]'",
        ),
    ]);
}

#[test]
fn credential_words_of_other_languages_and_scripts_count() {
    let words = [
        "passwort",
        "Kennwort",
        "contraseña",
        "contrasena",
        "mot_de_passe",
        "senha",
        "parola",
        "wachtwoord",
        "hasło",
        "haslo",
        "пароль",
        "Пароль",
        "密码",
        "密碼",
        "パスワード",
        "비밀번호",
        "ｐａｓｓｗｏｒｄ",
        "Datenbankpasswort",
        "DB_PASSWORT",
    ];
    let mut rows = Vec::new();
    for word in words {
        for (text, want) in [
            (format!("{word}=Xk29fjQmLr"), format!("{word}=[REDACTED]")),
            (format!("{word}: Xk29fjQmLr"), format!("{word}: [REDACTED]")),
            (
                format!("{{\"{word}\": \"Xk29fjQmLr\", \"user\": \"app\"}}"),
                format!("{{\"{word}\": \"[REDACTED]\", \"user\": \"app\"}}"),
            ),
        ] {
            rows.push((text, want));
        }
    }
    let fixed = [
        ("mot de passe: Xk29fjQmLr", "mot de passe: [REDACTED]"),
        ("Mot de passe : Xk29fjQmLr", "Mot de passe : [REDACTED]"),
        ("كلمة المرور: Xk29fjQmLr", "كلمة المرور: [REDACTED]"),
        // CJK text without blanks, fullwidth colon and comma.
        (
            "错误：数据库密码=Xk29fjQmLr，请检查",
            "错误：数据库密码=[REDACTED]，请检查",
        ),
        ("密码：Xk29fjQmLr。", "密码：[REDACTED]。"),
        (
            "接続エラー：パスワード＝Xk29fjQmLr、ユーザー＝app",
            "接続エラー：パスワード＝[REDACTED]、ユーザー＝app",
        ),
        // Look-alikes: a password error, a file of passwords, prose.
        ("密码错误：用户app", "密码错误：用户app"),
        ("passwortdatei: /etc/app/pw", "passwortdatei: /etc/app/pw"),
        (
            "Passwort falsch für Benutzer app",
            "Passwort falsch für Benutzer app",
        ),
        ("пароль неверный", "пароль неверный"),
        ("parola chiave: deploy", "parola chiave: deploy"),
    ];
    rows.extend(fixed.iter().map(|(t, w)| (t.to_string(), w.to_string())));
    let rows: Vec<(&str, &str)> = rows.iter().map(|(t, w)| (t.as_str(), w.as_str())).collect();
    check(&rows);
}

#[test]
fn switches_that_take_no_value_keep_their_neighbours() {
    check(&[
        (
            "+ docker login --username ci --password-stdin registry.example.com",
            "+ docker login --username ci --password-stdin registry.example.com",
        ),
        (
            "+ ansible-playbook --ask-vault-pass site.yml",
            "+ ansible-playbook --ask-vault-pass site.yml",
        ),
        (
            "+ ansible-playbook --ask-pass --ask-become-pass -i hosts site.yml",
            "+ ansible-playbook --ask-pass --ask-become-pass -i hosts site.yml",
        ),
        (
            "+ mysqldump --skip-password app",
            "+ mysqldump --skip-password app",
        ),
        (
            "+ gpg --passphrase-prompt deploy",
            "+ gpg --passphrase-prompt deploy",
        ),
        (
            "+ pg_dump --no-password -h db app",
            "+ pg_dump --no-password -h db app",
        ),
        (
            "+ psql -h db -U app -W appdb",
            "+ psql -h db -U app -W appdb",
        ),
        (
            "+ restic --password-command /usr/local/bin/getpw snapshots",
            "+ restic --password-command /usr/local/bin/getpw snapshots",
        ),
        (
            "+ gpg --batch --passphrase-fd 0 -c dump.sql",
            "+ gpg --batch --passphrase-fd 0 -c dump.sql",
        ),
        // The flags that do take the password still lose it.
        (
            "+ docker login -u ci --password Xk29fjQmLrPq registry.example.com",
            "+ docker login -u ci --password [REDACTED] registry.example.com",
        ),
        (
            "+ ansible-vault view --vault-password Xk29fjQmLrPq secrets.yml",
            "+ ansible-vault view --vault-password [REDACTED] secrets.yml",
        ),
    ]);
}

/// `ldapsearch -x -d -1 … -w 'Kq8vN2xL/Rt5pQ9'` against a server that refuses the bind.
const LDAP_DUMP: &str = "ber_flush2: 56 bytes to sd 3
  0000:  30 36 02 01 01 60 31 02  01 03 04 1b 63 6e 3d 61   06...`1.....cn=a  
  0010:  64 6d 69 6e 2c 64 63 3d  63 6f 72 70 2c 64 63 3d   dmin,dc=corp,dc=  
  0020:  65 78 61 6d 70 6c 65 80  0f 4b 71 38 76 4e 32 78   example..Kq8vN2x  
  0030:  4c 2f 52 74 35 70 51 39                            L/Rt5pQ9          
ldap_bind: Invalid credentials (49)
";

/// The dump's byte columns spell the password (`4b 71 38 76 …` is `Kq8v…`): the whole
/// dump becomes one line, in the body as in the summary.
#[test]
fn hex_dumps_collapse_to_one_line() {
    let scrubbed = scrubber().scrub(LDAP_DUMP);
    assert_eq!(
        scrubbed,
        "ber_flush2: 56 bytes to sd 3\n[hex dump]\nldap_bind: Invalid credentials (49)\n"
    );
    assert_eq!(
        collapse_traces(&scrubbed),
        "ber_flush2: 56 bytes to sd 3\n[hex dump]\nldap_bind: Invalid credentials (49)\n"
    );
    // `xxd` and `hexdump -C` of a file that holds the password: a line of a dump alone is one
    // too; a line that only starts like one stays.
    check(&[
        (
            "00000010: 7377 6f72 643a 204b 7138 764e 3278 4c2f  sword: Kq8vN2xL/",
            "[hex dump]",
        ),
        (
            "00000010  73 77 6f 72 64 3a 20 4b  71 38 76 4e 32 78 4c 2f  |sword: Kq8vN2xL/|",
            "[hex dump]",
        ),
        (
            "2026: 12 07 18 13  deploy started",
            "2026: 12 07 18 13  deploy started",
        ),
    ]);
}
