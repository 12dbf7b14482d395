//! Every concrete case of DESIGN.md "Scrubbing" and of issue 34, one row each: what must
//! go (an attacker's ordinary tool output, the credential forms, the run's own secrets
//! however they are dressed, normalisation) and what must stay (benign look-alikes and the
//! words around a redaction). Each row is the text and exactly what the scrubber must leave
//! of it, so a row fails on a leak and on mangled neighbours alike. The secrets are made up
//! for this file.

use std::ffi::OsString;

use crontap_scrub::Scrubber;

mod support;

/// The run's own secrets: a heartbeat URL whose token reads like words (so only the exact
/// layer can know it), and a header value.
fn scrubber() -> Scrubber {
    Scrubber::new(
        [
            "https://hb.example/ping/nightly-backup-check".to_owned(),
            "nightly-backup-check".to_owned(),
            "Hdr-Value-Owl".to_owned(),
        ],
        [(
            OsString::from("STORE_PASSWORD"),
            OsString::from("plain words here"),
        )],
    )
}

/// Asserts every row, and reports all failing rows at once.
fn check(rows: &[(&str, &str)]) {
    let s = scrubber();
    let failed: Vec<String> = rows
        .iter()
        .filter_map(|(text, want)| {
            let got = s.scrub(text);
            (got != *want).then(|| format!("\n  text: {text:?}\n  want: {want:?}\n  got:  {got:?}"))
        })
        .collect();
    support::assert_no_row_failed(&failed);
}

#[test]
fn url_user_info_goes_whatever_follows_the_host() {
    check(&[
        (
            "dial tcp: lookup postgres://app:Vq8rLm2Tzx@db:5432: no such host",
            "dial tcp: lookup postgres://[REDACTED]@db:5432: no such host",
        ),
        (
            "could not connect to postgres://app:Vq8rLm2Tzx@db:5432.",
            "could not connect to postgres://[REDACTED]@db:5432.",
        ),
        (
            "dial redis://svc:Kp4wRz7Qn@cache: connection refused",
            "dial redis://[REDACTED]@cache: connection refused",
        ),
        (
            "retrying postgres://app:Vq8rLm2Tzx@db!",
            "retrying postgres://[REDACTED]@db!",
        ),
        (
            "[postgres://app:Vq8rLm2Tzx@db]",
            "[postgres://[REDACTED]@db]",
        ),
        (
            "connecting to mysql://root:Vq8rLm2Tzx@db:3306 now",
            "connecting to mysql://[REDACTED]@db:3306 now",
        ),
        (
            "connecting to mysql://root:Vq8rLm2Tzx@db",
            "connecting to mysql://[REDACTED]@db",
        ),
    ]);
}

#[test]
fn oracle_logons_lose_their_passwords() {
    check(&[
        (
            "java.sql.SQLException: Listener refused the connection: jdbc:oracle:thin:scott/Tg7mWq2Lx@//db:1521/ORCL",
            "java.sql.SQLException: Listener refused the connection: jdbc:oracle:thin:scott/[REDACTED]@//db:1521/ORCL",
        ),
        (
            "+ sqlplus -s scott/Tg7mWq2Lx@ORCL @report.sql",
            "+ sqlplus -s scott/[REDACTED]@ORCL @report.sql",
        ),
        (
            "+ expdp system/Tg7mWq2Lx@ORCL directory=dump dumpfile=x.dmp",
            "+ expdp system/[REDACTED]@ORCL directory=dump dumpfile=x.dmp",
        ),
    ]);
}

#[test]
fn line_like_characters_are_a_space_before_a_line_is_scrubbed() {
    check(&[
        ("password:\u{b}Hunter2Secret", "password: [REDACTED]"),
        ("password:\u{c}Hunter2Secret", "password: [REDACTED]"),
        ("password:\u{85}Hunter2Secret", "password: [REDACTED]"),
        ("password:\u{2028}Hunter2Secret", "password: [REDACTED]"),
        ("password:\u{2029}Hunter2Secret", "password: [REDACTED]"),
        ("用户jane.doe@example.com不存在", "用户[REDACTED]不存在"),
        ("password：Hunter2Secret", "password:[REDACTED]"),
    ]);
}

#[test]
fn the_runs_own_secrets_go_however_they_are_dressed() {
    check(&[
        ("seen nightly-backup-check here", "seen [REDACTED] here"),
        ("seen NIGHTLY-BACKUP-CHECK here", "seen [REDACTED] here"),
        ("seen Nightly-Backup-Check here", "seen [REDACTED] here"),
        ("seen nightly%2Dbackup%2Dcheck here", "seen [REDACTED] here"),
        (
            "seen %6E%69%67%68%74%6C%79-backup-check here",
            "seen [REDACTED] here",
        ),
        (
            "seen nightly-back\u{200b}up-check here",
            "seen [REDACTED] here",
        ),
        (
            "seen night\u{feff}ly-backup-\u{200d}check here",
            "seen [REDACTED] here",
        ),
        ("(nightly-backup-check).", "([REDACTED])."),
        (
            "header HDR-VALUE-OWL rejected",
            "header [REDACTED] rejected",
        ),
        (
            "store login with plain%20words%20here",
            "store login with [REDACTED]",
        ),
        (
            "GET https://hb.example/ping/nightly-backup-check/fail?msg=x",
            "GET [REDACTED]/fail?msg=x",
        ),
    ]);
}

#[test]
fn named_values_go_whole() {
    check(&[
        (
            "password: correct horse battery staple",
            "password: [REDACTED]",
        ),
        ("passwd=Vq8rLm2Tzx", "passwd=[REDACTED]"),
        ("pwd: Vq8rLm2Tzx", "pwd: [REDACTED]"),
        ("pw=Pw5tRq8LzC", "pw=[REDACTED]"),
        ("passphrase: maple orbit lantern", "passphrase: [REDACTED]"),
        ("secret = \"Vq8rLm2Tzx\"", "secret = \"[REDACTED]\""),
        ("token: Vq8rLm2Tzx", "token: [REDACTED]"),
        ("api key: Vq8rLm2Tzx", "api key: [REDACTED]"),
        ("API_KEY=Vq8rLm2Tzx", "API_KEY=[REDACTED]"),
        ("credential=Vq8rLm2Tzx", "credential=[REDACTED]"),
        ("auth=Vq8rLm2Tzx", "auth=[REDACTED]"),
        (
            "vendor_oauth_token=Vq8rLm2Tzx",
            "vendor_oauth_token=[REDACTED]",
        ),
        (
            "+ ACME_KEY=Jd8mWq3ZtLx6PvR2nKc9Yb ./bin/run-report",
            "+ ACME_KEY=[REDACTED] ./bin/run-report",
        ),
        (
            "  db_password: Vq8rLm2Tzx and more words",
            "  db_password: [REDACTED]",
        ),
        (
            "+ curl -s 'https://api.example/v1?user=ops&pw=Pw5tRq8LzC&x=1'",
            "+ curl -s 'https://api.example/v1?user=ops&pw=[REDACTED]&x=1'",
        ),
    ]);
}

#[test]
fn database_and_server_forms_lose_their_passwords() {
    check(&[
        (
            "ERROR 1396 (HY000): Operation ALTER USER failed: ALTER USER 'app'@'%' IDENTIFIED BY 'Zt5pLq9wXe'",
            "ERROR 1396 (HY000): Operation ALTER USER failed: ALTER USER 'app'@'%' IDENTIFIED BY '[REDACTED]'",
        ),
        (
            "CREATE ROLE app WITH LOGIN PASSWORD 'Zt5pLq9wXe';",
            "CREATE ROLE app WITH LOGIN PASSWORD '[REDACTED]';",
        ),
        (
            "STATEMENT:  CREATE USER app WITH PASSWORD 'Zt5 pLq9wXe';",
            "STATEMENT:  CREATE USER app WITH PASSWORD '[REDACTED]';",
        ),
        ("requirepass Rq8vTn3KwZ", "requirepass [REDACTED]"),
        (
            "+ redis-cli CONFIG SET requirepass Rq8vTn3KwZ",
            "+ redis-cli CONFIG SET requirepass [REDACTED]",
        ),
        (
            "Driver={ODBC Driver 18 for SQL Server};Server=db;Uid=sa;Pwd=Od7vXq3MwK;Encrypt=yes",
            "Driver={ODBC Driver 18 for SQL Server};Server=db;Uid=sa;Pwd=[REDACTED];Encrypt=yes",
        ),
        (
            "Server=db;Uid=sa;Pwd={Od7v;Xq3MwK};Encrypt=yes",
            "Server=db;Uid=sa;Pwd={[REDACTED]};Encrypt=yes",
        ),
        (
            "DETAIL:  Key (api_token)=(Vq8rLm2TzxQw7e) already exists.",
            "DETAIL:  Key (api_token)=([REDACTED]) already exists.",
        ),
        (
            "ERROR 1062 (23000): Duplicate entry 'Vq8rLm2TzxQw7e' for key 'users.api_token'",
            "ERROR 1062 (23000): Duplicate entry '[REDACTED]' for key 'users.api_token'",
        ),
        (
            "ERROR:  new row for relation \"users\" violates check constraint \"users_password_hash_check\"\nDETAIL:  Failing row contains (ops, Vq8rLm2TzxQw7e).",
            "ERROR:  new row for relation \"users\" violates check constraint \"users_password_hash_check\"\nDETAIL:  Failing row contains ([REDACTED], [REDACTED]).",
        ),
        (
            "psql: error: could not translate host name \"Vq8r/Lm2@db\" to address: Name or service not known",
            "psql: error: could not translate host name \"[REDACTED]@db\" to address: Name or service not known",
        ),
    ]);
}

#[test]
fn tool_flags_variables_and_argument_lists_lose_their_passwords() {
    check(&[
        (
            "+ htpasswd -b -c /etc/nginx/.htpasswd admin Hx7pQw2LmV",
            "+ htpasswd -b -c /etc/nginx/.htpasswd admin [REDACTED]",
        ),
        (
            "+ zip -P Zp9xWq4TnB backup.zip data/",
            "+ zip -P [REDACTED] backup.zip data/",
        ),
        (
            "+ openssl enc -aes-256-cbc -k Ok3nTq8WxM -in a -out b",
            "+ openssl enc -aes-256-cbc -k [REDACTED] -in a -out b",
        ),
        (
            "+ keytool -importkeystore -storepass Ks4mPz7VqN -keystore x.jks",
            "+ keytool -importkeystore -storepass [REDACTED] -keystore x.jks",
        ),
        (
            "+ SSHPASS=Ss6wLp2KxR sshpass -e ssh backup@db true",
            "+ SSHPASS=[REDACTED] sshpass -e ssh backup@db true",
        ),
        (
            "+ mysql -h db -u app -pVq8rLm2Tzx app",
            "+ mysql -h db -u app -p[REDACTED] app",
        ),
        (
            "+ mysql --password=Vq8rLm2Tzx app",
            "+ mysql --password=[REDACTED] app",
        ),
        (
            "+ redis-cli -h cache -a Vq8rLm2Tzx ping",
            "+ redis-cli -h cache -a [REDACTED] ping",
        ),
        (
            "+ ldapsearch -x -D cn=admin,dc=example -w Vq8rLm2Tzx -b dc=example",
            "+ ldapsearch -x -D cn=admin,dc=example -w [REDACTED] -b dc=example",
        ),
        (
            "+ 7z a -pVq8rLm2Tzx backup.7z data",
            "+ 7z a -p[REDACTED] backup.7z data",
        ),
        (
            "+ MYSQL_PWD=Vq8rLm2Tzx mysqldump app",
            "+ MYSQL_PWD=[REDACTED] mysqldump app",
        ),
        (
            "+ RSYNC_PASSWORD=Vq8rLm2Tzx rsync -a src/ /mnt",
            "+ RSYNC_PASSWORD=[REDACTED] rsync -a src/ /mnt",
        ),
        (
            "+ PGPASSWORD=Vq8rLm2Tzx psql -h db",
            "+ PGPASSWORD=[REDACTED] psql -h db",
        ),
        (
            "subprocess.CalledProcessError: Command '['sshpass', '-p', 'Vq8rLm2Tzx', 'ssh', 'db']' returned non-zero exit status 255.",
            "subprocess.CalledProcessError: Command '['sshpass', '-p', '[REDACTED]', 'ssh', 'db']' returned non-zero exit status 255.",
        ),
        (
            "Setting --password (password) to Vq8rLm2Tzx",
            "Setting --password (password) to [REDACTED]",
        ),
        (
            "Setting --http-password (httppassword) to maple orbit",
            "Setting --http-password (httppassword) to [REDACTED]",
        ),
    ]);
}

#[test]
fn protocol_traces_lose_their_credentials() {
    check(&[
        ("---> PASS Vq8rLm2Tzx", "---> PASS [REDACTED]"),
        (
            "C: AUTH PLAIN AGFwcABWcThyTG0yVHp4",
            "C: AUTH PLAIN [REDACTED]",
        ),
        (
            "send: 'AUTH LOGIN YXBwQGNvcnAuZXhhbXBsZQ==\\r\\n'\nreply: b'334 UGFzc3dvcmQ6\\r\\n'\nsend: 'Vm44ckxtMlR6eFE3ZQ==\\r\\n'",
            "send: 'AUTH LOGIN [REDACTED]\\r\\n'\nreply: b'334 UGFzc3dvcmQ6\\r\\n'\nsend: '[REDACTED]\\r\\n'",
        ),
        (
            "C: AUTH LOGIN\nS: 334 VXNlcm5hbWU6\nC: YXBw\nS: 334 UGFzc3dvcmQ6\nC: Vm44ckxtMlR6eFE3ZQ==",
            "C: AUTH LOGIN\nS: 334 VXNlcm5hbWU6\nC: [REDACTED]\nS: 334 UGFzc3dvcmQ6\nC: [REDACTED]",
        ),
        (
            "> Authorization: Basic YXBwOlZxOHJMbTJUeng=",
            "> Authorization: [REDACTED]",
        ),
        (
            "send: b'GET / HTTP/1.1\\r\\nHost: db\\r\\nAuthorization: Bearer Vq8rLm2TzxQw7e\\r\\n\\r\\n'",
            "send: b'GET / HTTP/1.1\\r\\nHost: db\\r\\nAuthorization: [REDACTED]\\r\\n\\r\\n'",
        ),
        (
            "-> Authorization: Bearer Vq8rLm2TzxQw7e",
            "-> Authorization: [REDACTED]",
        ),
    ]);
}

#[test]
fn tokens_go_by_their_shape_with_or_without_a_row() {
    check(&[
        (
            "payment failed with sq0atp-Xk4fT9qLm2RwZ8pN3vB7cD",
            "payment failed with [REDACTED]",
        ),
        (
            "auth with da2-k3f9x2m7q4w8z1p5r6t0y2u4i8 failed",
            "auth with [REDACTED] failed",
        ),
        (
            "loading model with hf_QxLmRtVbNcZkWpJsHyFgDaEuIoPqTrSw failed",
            "loading model with [REDACTED] failed",
        ),
        (
            "failed with xyz_Kq8mWz3TpL7vRn2XcB5d",
            "failed with [REDACTED]",
        ),
        (
            "failed with abc-Kq8mWz3TpL7vRn2XcB5d",
            "failed with [REDACTED]",
        ),
        (
            "failed with Kq8mWz3TpL7vRn2XcB5dYh6N",
            "failed with [REDACTED]",
        ),
    ]);
}

#[test]
fn personal_data_goes() {
    check(&[
        ("contact jane.doe@example.com", "contact [REDACTED]"),
        (
            "card 4111 1111 1111 1111 declined",
            "card [REDACTED] declined",
        ),
        ("IBAN DE89370400440532013000", "IBAN [REDACTED]"),
        ("call +1 415 555 0132", "call [REDACTED]"),
    ]);
}

#[test]
fn benign_look_alikes_and_neighbours_stay() {
    let same = [
        "ERROR 1045 (28000): Access denied for user 'app'@'localhost' (using password: YES)",
        "\tat com.acme.TokenService.refresh(TokenService.java:142)",
        "Caused by: java.sql.SQLException: Listener refused: jdbc:oracle:thin:@db:1521:ORCL",
        "sha256:3b1f0c9e8d7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c",
        "\"integrity\": \"sha512-Kq8mWz3TpL7vRn2XcB5dYh6NKq8mWz3TpL7vRn2XcB5dYh6NKq8mWz3TpL7vRn2XcB5dYh6NKq8mWz3TpL7vRn2Xc==\"",
        "golang.org/x/text v0.14.0 h1:ScX5w1eTa3QqT8oi6+ziP7dTV1S2+ALU0bI+0zXKWiQ=",
        "checksum 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08 mismatch",
        "commit 4b825dc642cb6eb9a060e54bf8d69288fbee4904",
        "HEAD is now at 4b825dc642cb6eb9a060e54bf8d69288fbee4904 Fix import",
        "request_id=7f3c9b2e-4d1a-4e8b-9f6c-2a5d8e1b0c3f failed",
        "X-Request-Id: 7f3c9b2e-4d1a-4e8b-9f6c-2a5d8e1b0c3f",
        "upgraded to 2.14.3-rc.1+build.20261204",
        "open /var/lib/app/data/2026-12-04/export_v3.csv: no such file",
        "exit status 137 after 1200 retries",
        "the backup could not be written to disk",
        "FATAL:  password authentication failed for user \"app\"",
        "连接失败：超时",
        "requirepass is not set",
        "+ ssh -p 2222 host && mkdir -p /x && psql -p 5432",
    ];
    let rows: Vec<(&str, &str)> = same.iter().map(|t| (*t, *t)).collect();
    check(&rows);
    // The words around a redaction stay.
    check(&[
        (
            "retry 3: postgres://app:Vq8rLm2Tzx@db:5432/shop timed out after 30s",
            "retry 3: postgres://[REDACTED]@db:5432/shop timed out after 30s",
        ),
        (
            "Login failed (password=Vq8rLm2Tzx), giving up",
            "Login failed (password=[REDACTED]), giving up",
        ),
    ]);
}

#[test]
fn a_password_with_at_signs_and_colons_goes_whole() {
    check(&[
        (
            "Duplicate entry '7rNVHQ26JqY@HtzbaI3B4K9v/4165e7yyRA:TX6' for key 'x'",
            "Duplicate entry '[REDACTED]' for key 'x'",
        ),
        (
            "found: 'Ab3Hndm@Kq8mWz3TpL7vRn2XcB5dYh6N:nIG'",
            "found: '[REDACTED]'",
        ),
        (
            "+ ACME_KEY=Kq8mWz3TpL7vRn2XcB5dYh6N:Cih",
            "+ ACME_KEY=[REDACTED]",
        ),
        (
            "token:Kq8mWz3TpL7vRn2XcB5dYh6N rejected",
            "token:[REDACTED] rejected",
        ),
        (
            "jdbc:oracle:thin:scott/Yd1Sg@Kq8mWz3TpL7vRn2XcB5dYh6N:ufF@//db:1521/ORCL",
            "jdbc:oracle:thin:scott/[REDACTED]@//db:1521/ORCL",
        ),
        (
            "open app:Yd1Sg@Kq8mWz3TpL7vRn2/XcB5dYh6N:QGG@tcp(db:3306)/app: no such host",
            "open [REDACTED]@tcp(db:3306)/app: no such host",
        ),
    ]);
}

/// The classes of real programs' output that reached the Healthchecks body before
/// (tests/corpus/programs/missed.txt), written afresh with secrets of our own.
#[test]
fn what_real_programs_quote_back_goes() {
    check(&[
        (
            "STATEMENT:  INSERT INTO users (name, password_hash) VALUES ('ops', 'Wq4 zN8@x/y:Lp');",
            "STATEMENT:  INSERT INTO users (name, password_hash) VALUES ('ops', '[REDACTED]');",
        ),
        (
            "psql: error: could not translate host name \"Tm8RqzW2\" to address: Name or service not known",
            "psql: error: could not translate host name \"[REDACTED]\" to address: Name or service not known",
        ),
        (
            "open app:amber quill sprocket@tcp(db.invalid:3306)/app: no such host",
            "open [REDACTED]@tcp(db.invalid:3306)/app: no such host",
        ),
        (
            "config: parse \"redis://svc:amber quill sprocket@cache:6379/0\": net/url: invalid userinfo",
            "config: parse \"redis://[REDACTED]@cache:6379/0\": net/url: invalid userinfo",
        ),
        (
            "java.net.URISyntaxException: Illegal character in authority at index 8: https://ci:amber quill sprocket@repo.example/x",
            "java.net.URISyntaxException: Illegal character in authority at index 8: https://[REDACTED]@repo.example/x",
        ),
        (
            "No suitable driver found for jdbc:oracle:thin:scott/amber quill, #9%@//db:1521/ORCL",
            "No suitable driver found for jdbc:oracle:thin:scott/[REDACTED]@//db:1521/ORCL",
        ),
        (
            "+ jarsigner -keystore r.jks -storepass 'amber quill' app.jar release",
            "+ jarsigner -keystore r.jks -storepass [REDACTED] app.jar release",
        ),
        (
            "Error: Command failed: sshpass -p amber quill sprocket ssh -p 2222 backup@db true",
            "Error: Command failed: sshpass -p [REDACTED] [REDACTED] ssh -p 2222 backup@db true",
        ),
        (
            "Looking in indexes: http://ci:****@Qz7wTr/rest:9Lk@pypi.example:8080/simple",
            "Looking in indexes: http://[REDACTED]@pypi.example:8080/simple",
        ),
        (
            "configparser.InterpolationSyntaxError: '%' must be followed by '%' or '(', found: '%Qz7 amber'",
            "configparser.InterpolationSyntaxError: '%' must be followed by '%' or '(', found: '%[REDACTED]'",
        ),
        (
            "ValueError: invalid literal for int() with base 10: 'Qz7!wTr9x'\nhttp.client.InvalidURL: nonnumeric port: 'Qz7!wTr9x'",
            "ValueError: invalid literal for int() with base 10: '[REDACTED]'\nhttp.client.InvalidURL: nonnumeric port: '[REDACTED]'",
        ),
        (
            "http.client.InvalidURL: URL can't contain control characters. 'ops:amber quill@10.0.0.7' (found at least ' ')",
            "http.client.InvalidURL: URL can't contain control characters. '[REDACTED]@10.0.0.7' (found at least ' ')",
        ),
        (
            "api_key\n  String should have at most 8 characters [type=string_too_long, input_value='Qz7wTr9xLm', input_type=str]",
            "api_key\n  String should have at most 8 characters [type=string_too_long, input_value='[REDACTED]', input_type=str]",
        ),
        (
            "+ sed -i 's/@SMTP_PASSWORD@/Amber-quill42!/' mail.conf",
            "+ sed -i 's/@SMTP_PASSWORD@/[REDACTED]/' mail.conf",
        ),
        (
            "    conn.sendall(b\"Bearer amber quill sprocket\")",
            "    conn.sendall(b\"Bearer [REDACTED]\")",
        ),
        (
            "HTTPError: 401 Client Error: Unauthorized for url: https://api.example/botQz7wTr9xLm%3Aab/getUpdates",
            "HTTPError: 401 Client Error: Unauthorized for url: https://api.example/bot[REDACTED]/getUpdates",
        ),
        (
            ">       assert secret == expected\nE       AssertionError: assert 'Amber-quill42!' == 'Qz7wTr9x'\nE         - Qz7wTr9x\nE         + Amber-quill42!",
            ">       assert secret == expected\nE       AssertionError: assert '[REDACTED]' == '[REDACTED]'\nE         - [REDACTED]\nE         + [REDACTED]",
        ),
        (
            "ftp: Unknown .netrc keyword `sprocket'",
            "ftp: Unknown .netrc keyword `[REDACTED]'",
        ),
        (
            "./backup.env: line 4: sprocket: command not found",
            "./backup.env: line 4: [REDACTED]: command not found",
        ),
        (
            "jq: error (at <unknown>): Invalid numeric literal (while parsing 'Qz7#wTr9!xLm2$Kp8*vBn4^Hs6')",
            "jq: error (at <unknown>): Invalid numeric literal (while parsing '[REDACTED]')",
        ),
    ]);
}
