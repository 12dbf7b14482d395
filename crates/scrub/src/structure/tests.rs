use super::*;

fn r(text: &str) -> String {
    redact(text).into_owned()
}

#[test]
fn names() {
    for yes in [
        "password",
        "DB_PASSWORD",
        "apiKey",
        "x-api-key",
        "AWS_SECRET_ACCESS_KEY",
        "--auth-token",
        "clientSecret",
        "session_id",
        "PGPASSWORD",
        "csrf_token",
        "refresh_token",
        "page_secret",
    ] {
        assert!(names_a_secret(yes), "{yes}");
    }
    for no in [
        "author",
        "keyboard",
        "key",
        "monkey",
        "password_file",
        "TOKEN_PATH",
        "passage",
        "user",
        "primary_key",
        "page_token",
        "nextPageToken",
        "NextToken",
        "pagetoken",
        "continuation_tokens",
        "secretKeyRef",
        "auth.user",
        "token_timeout",
        "password_policy",
    ] {
        assert!(!names_a_secret(no), "{no}");
    }
}

#[test]
fn url_user_info() {
    assert_eq!(
        r("postgres://app:pw1@db:5432/x"),
        "postgres://[REDACTED]@db:5432/x"
    );
    assert_eq!(
        r("mongodb+srv://u:p@cluster0.example.net/db"),
        "mongodb+srv://[REDACTED]@cluster0.example.net/db"
    );
    assert_eq!(
        r("jdbc:mysql://root:toor@db/app"),
        "jdbc:mysql://[REDACTED]@db/app"
    );
    assert_eq!(
        r("amqp://guest:guest@rabbit:5672/"),
        "amqp://[REDACTED]@rabbit:5672/"
    );
    assert_eq!(r("mail ops@example.com now"), "mail ops@example.com now");
}

#[test]
fn headers_and_curl() {
    assert_eq!(
        r("Authorization: Bearer abc.def.ghi"),
        "Authorization: [REDACTED]"
    );
    assert_eq!(r("> cookie: sid=1; theme=dark"), "> cookie: [REDACTED]");
    assert_eq!(
        r(r#"{"X-Api-Key": "k-123"}"#),
        r#"{"X-Api-Key": "[REDACTED]"}"#
    );
    assert_eq!(
        r("curl -u admin:hunter2 https://x"),
        "curl -u [REDACTED] https://x"
    );
    assert_eq!(
        r("curl --user=admin:hunter2 https://x"),
        "curl --user=[REDACTED] https://x"
    );
}

#[test]
fn query_parameters() {
    assert_eq!(
        r("GET /cb?code=abc123&state=xyz&access_token=tok9 HTTP/1.1"),
        "GET /cb?code=[REDACTED]&state=xyz&access_token=[REDACTED] HTTP/1.1"
    );
    assert_eq!(
        r("https://b.s3.amazonaws.com/o?X-Amz-Credential=AK%2F1&X-Amz-Signature=abcd"),
        "https://b.s3.amazonaws.com/o?X-Amz-Credential=[REDACTED]&X-Amz-Signature=[REDACTED]"
    );
    assert_eq!(
        r("https://x.blob.core.windows.net/c?sv=2022&sig=Zm9v%3D"),
        "https://x.blob.core.windows.net/c?sv=2022&sig=[REDACTED]"
    );
}

#[test]
fn assignments() {
    assert_eq!(r("password=hunter2 failed"), "password=[REDACTED] failed");
    assert_eq!(
        r(r#"{"api_key": "k 123", "user": "bob"}"#),
        r#"{"api_key": "[REDACTED]", "user": "bob"}"#
    );
    assert_eq!(r("DB_PASSWD: s3cret; next"), "DB_PASSWD: [REDACTED]; next");
    assert_eq!(
        r("Server=db;User Id=sa;Password=p@ss w;"),
        "Server=db;User Id=sa;Password=[REDACTED];"
    );
    assert_eq!(
        r("mysql --password hunter2 -h db"),
        "mysql --password [REDACTED] -h db"
    );
    assert_eq!(r("login --token=abc"), "login --token=[REDACTED]");
    assert_eq!(r("secret_key = 'a b'"), "secret_key = '[REDACTED]'");
}

#[test]
fn benign_text_survives() {
    for text in [
        "FATAL: password authentication failed for user \"app\"",
        "NoCredentialsError: Unable to locate credentials",
        "token expired, please log in again",
        "reading --password-file /run/secrets/db",
        "primary_key=42 author=jane",
        "a password is required",
        "key=user_id value=7",
        "validation failed: password: must be at least 12 characters",
        "status: failed, token: missing",
        "WARN deprecated option --password used",
    ] {
        assert_eq!(r(text), text);
    }
}

#[test]
fn connection_string_quotes_stay_around_the_marker() {
    assert_eq!(
        r("Driver={X};PWD={a;b}}c};UID=sa"),
        "Driver={X};PWD={[REDACTED]};UID=sa"
    );
    assert_eq!(
        r("Server=db;Password='a;b';User Id=sa"),
        "Server=db;Password='[REDACTED]';User Id=sa"
    );
}

#[test]
fn idempotent() {
    for text in [
        "password=hunter2",
        "Authorization: Bearer x",
        "postgres://a:b@h/x",
        "?sig=abc",
        "Driver={X};PWD={a;b}}c};UID=sa",
        "Server=db;Password=\"a;b\";User Id=sa",
    ] {
        let once = r(text);
        assert!(!once.contains(";b"), "{text} -> {once}");
        assert_eq!(r(&once), once, "{text}");
    }
}

#[test]
fn values_read_to_their_natural_end() {
    assert_eq!(
        r("authorization=Bearer lkwyla4szJxhvI3y next"),
        "authorization=[REDACTED] next"
    );
    assert_eq!(
        r("DJANGO_SECRET_KEY=StAZ&vl(Mz@B^k4o-pH1 ok"),
        "DJANGO_SECRET_KEY=[REDACTED] ok"
    );
    assert_eq!(
        r("Server=tcp:db;Password=Zx9!kq#Lm2$"),
        "Server=tcp:db;Password=[REDACTED]"
    );
    assert_eq!(
        r(r#"{"password"=>"hunter2pass", "a"=>1}"#),
        r#"{"password"=>"[REDACTED]", "a"=>1}"#
    );
    assert_eq!(r("password => 'x y'"), "password => '[REDACTED]'");
    assert_eq!(
        r(r#"{\"password\":\"hunter2pass\"}"#),
        r#"{\"password\":\"[REDACTED]\"}"#
    );
    assert_eq!(
        r("mysql --password 'hunter2pass' -h db"),
        "mysql --password '[REDACTED]' -h db"
    );
    assert_eq!(
        r(r#"{"Authorization":["Basic dTpaeDkha3EjTG0yJA=="]}"#),
        r#"{"Authorization":["[REDACTED]"]}"#
    );
}

#[test]
fn quotes_a_quoted_value_escapes_stay_inside_it() {
    let cases = [
        (
            r#"{"password":"p\"ss w0rd"}"#,
            r#"{"password":"[REDACTED]"}"#,
        ),
        (
            r#"{"password":"ends with \\","user":"app"}"#,
            r#"{"password":"[REDACTED]","user":"app"}"#,
        ),
        (
            r"{'password': 'p\'ss w0rd', 'user': 'app'}",
            r"{'password': '[REDACTED]', 'user': 'app'}",
        ),
        (
            r#"{\"password\":\"p\\\"ss w0rd\"}"#,
            r#"{\"password\":\"[REDACTED]\"}"#,
        ),
        (
            r#"{\"password\":\"a\\\\\",\"user\":\"app\"}"#,
            r#"{\"password\":\"[REDACTED]\",\"user\":\"app\"}"#,
        ),
    ];
    for (text, want) in cases {
        assert_eq!(r(text), want, "{text}");
    }
}

#[test]
fn passwords_with_url_characters() {
    assert_eq!(
        r("postgres://app:Zx9#kq/Lm2@db:5432/x"),
        "postgres://[REDACTED]@db:5432/x"
    );
    assert_eq!(
        r("mongodb://admin:p@ssw0rd@mongo:27017/db"),
        "mongodb://[REDACTED]@mongo:27017/db"
    );
    assert_eq!(
        r("see https://example.com/about for help"),
        "see https://example.com/about for help"
    );
}

#[test]
fn user_flags_without_a_password_stay() {
    assert_eq!(
        r("sudo -u postgres pg_dump app"),
        "sudo -u postgres pg_dump app"
    );
    assert_eq!(
        r("curl -u 'deploy:a b' https://x"),
        "curl -u [REDACTED] https://x"
    );
}

#[test]
fn credential_context_needs_a_generated_value() {
    assert_eq!(
        r("MAILGUN_KEY=0123456789abcdef0123456789abcdef"),
        "MAILGUN_KEY=[REDACTED]"
    );
    assert_eq!(
        r(r#"{"datadog_app": "k3j4h5g6f7d8s9a0q1w2e3r4"}"#),
        r#"{"datadog_app": "[REDACTED]"}"#
    );
    assert_eq!(
        r("license_key: 1b9d6bcd-bbfd-4b2d-9b5d-ab8dfbbd4bed"),
        "license_key: [REDACTED]"
    );
    for text in [
        "key=user_id value=7",
        "primary_key=0123456789abcdef0123456789abcdef",
        "cache_key=v2-deps-0123456789abcdef",
        "api_key_id=billing-prod-key",
        "credentialsId: 'a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d'",
        "token_endpoint=https://oauth2.example.com/token",
        "sentry_version=1.40.0-rc1",
        "WARN passing --password via the CLI is insecure",
        "oauth2: cannot fetch token: 400 Bad Request",
    ] {
        assert_eq!(r(text), text);
    }
    assert_eq!(
        r("twilio auth token 0123456789abcdef0123456789abcdef rejected"),
        "twilio auth token [REDACTED] rejected"
    );
    assert_eq!(
        r("using api key k3J9xQ2mP7vL4nR8tW1yZ5 for upload"),
        "using api key [REDACTED] for upload"
    );
    for text in [
        "cache key v2-deps-3f2a1b4c5d6e7f80 restored",
        "token for service account \"deployer\" expires in 3 days",
        "key fingerprint SHA256:nThbg6kXUpJWGl7E1IGOCspRomTxdCARLviKw6E5SY8",
        "secret rotation 20261129 done",
    ] {
        assert_eq!(r(text), text);
    }
    assert_eq!(r("session_id=abc123"), "session_id=[REDACTED]");
    assert_eq!(r("secret_id: s3cr3t-id"), "secret_id: [REDACTED]");
    assert_eq!(r("NGROK_AUTHTOKEN=x9y8z7"), "NGROK_AUTHTOKEN=[REDACTED]");
}

#[test]
fn dsns_without_a_scheme() {
    assert_eq!(
        r("dsn user:pa55@tcp(db:3306)/app failed"),
        "dsn [REDACTED]@tcp(db:3306)/app failed"
    );
    assert_eq!(
        r("sqlplus scott/tiger@//db.example.com:1521/ORCL"),
        "sqlplus [REDACTED]@//db.example.com:1521/ORCL"
    );
    assert_eq!(
        r("connect app:s3cret@db.internal:5432/orders"),
        "connect [REDACTED]@db.internal:5432/orders"
    );
    for text in [
        "fatal: could not read from git@github.com:org/repo.git",
        "npm install lodash/fp@4.17.21 @scope/pkg@1.2.3",
        "at 12:30 ops@example.com wrote",
    ] {
        assert_eq!(r(text), text);
    }
}

#[test]
fn secrets_named_in_attributes() {
    assert_eq!(
        r(r#"<add key="ClearTextPassword" value="feed-pw" />"#),
        r#"<add key="ClearTextPassword" value="[REDACTED]" />"#
    );
    let kept = r#"<add key="Username" value="deploy" />"#;
    assert_eq!(r(kept), kept);
}

#[test]
fn netrc_lines() {
    assert_eq!(
        r("bad line in ~/.netrc: machine api.example.com login deploy password s3cr3t"),
        "bad line in ~/.netrc: machine api.example.com login deploy password [REDACTED]"
    );
    assert_eq!(
        r("default login anonymous password guest-pw"),
        "default login anonymous password [REDACTED]"
    );
    assert_eq!(
        r(r#"bad entry "machine h login u password s3cr3t" in ~/.netrc"#),
        r#"bad entry "machine h login u password [REDACTED]" in ~/.netrc"#
    );
    let prose = "machine learning password reset flow failed";
    assert_eq!(r(prose), prose);
}

#[test]
fn percent_encoded_assignments() {
    assert_eq!(
        r("body=user%3Djane%26password%3Dhunter%252%26x%3D1"),
        "body=user%3Djane%26password%3D[REDACTED]%26x%3D1"
    );
    assert_eq!(
        r("q=%7B%22api_key%22%3A%22k-123%22%7D"),
        "q=%7B%22api_key%22%3A%22[REDACTED]%22%7D"
    );
    assert_eq!(r("path=%2Fhome%2Fapp"), "path=%2Fhome%2Fapp");
    // A `%` followed by a character of several bytes (found by the property test).
    assert_eq!(r("password%3D%𑏌"), "password%3D[REDACTED]");
    assert_eq!(r("password%3Dab%é%26x"), "password%3D[REDACTED]%26x");
}

#[test]
fn command_line_passwords() {
    assert_eq!(
        r("mysql -uroot -phunter2pass app"),
        "mysql -uroot -p[REDACTED] app"
    );
    assert_eq!(
        r("docker login -u deploy -p hunter2pass registry"),
        "docker login -u deploy -p [REDACTED] registry"
    );
    assert_eq!(
        r("sshpass -p hunter2pass ssh host"),
        "sshpass -p [REDACTED] ssh host"
    );
    assert_eq!(r("mysql -p -h db"), "mysql -p -h db");
    assert_eq!(r("grep -p pattern file"), "grep -p pattern file");
}
