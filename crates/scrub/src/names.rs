//! Judging names and values for [`super::structure`]: whether a name is a secret's
//! (`DB_PASSWORD`, `apiKey`, `NGROK_AUTHTOKEN`), whether it only gives context to a
//! generated-looking value (`MAILGUN_KEY`, `datadog_app`), whether a value looks
//! generated or is the start of a sentence about a secret (`password: must be …`), and
//! whether a name is a source or configuration file's (`TokenService.java`).
//!
//! The word lists are data: compact, one concern each.

mod memo;

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::LazyLock;

use memo::{listed, remembered, sorted};

/// Words that make a name a secret's wherever they stand in it.
#[rustfmt::skip]
const SECRET_WORDS: &[&str] = &[
    "password", "passwd", "pwd", "pw", "pass", "passphrase", "secret", "secrets", "token", "tokens",
    "apikey", "credential", "credentials", "creds", "dsn", "cookie", "session", "sessionid", "auth",
    "authorization", "bearer", "signature", "privatekey", "accesskey", "secretkey",
];
/// Credential words of other languages and scripts, in lower case and without blanks: a
/// name is a secret's when it, or one of its parts, ends in one (`Datenbankpasswort`,
/// `mot_de_passe`, `数据库密码`), though not when more follows (`密码错误`, a password
/// error). Fullwidth letters (`ｐａｓｓｗｏｒｄ`) are read as ASCII first.
#[rustfmt::skip]
const FOREIGN_WORDS: &[&str] = &[
    "passwort", "kennwort", "contraseña", "contrasena", "motdepasse", "senha", "parola",
    "wachtwoord", "hasło", "haslo", "heslo", "lösenord", "losenord", "passord", "salasana",
    "jelszó", "şifre", "lozinka", "пароль", "密码", "密碼", "口令", "パスワード", "비밀번호",
    "كلمةالمرور", "كلمةالسر", "סיסמה",
];

/// The longer word lists, sorted once on first use so that a look-up halves them (a line
/// of short names asks about every name, and the lists hold up to 250 words).
static SECRET_WORDS_SORTED: LazyLock<Vec<&str>> = LazyLock::new(|| sorted(SECRET_WORDS));
static NOT_A_VALUE_SORTED: LazyLock<Vec<&str>> = LazyLock::new(|| sorted(NOT_A_VALUE));
static NOT_A_KEY_SORTED: LazyLock<Vec<&str>> = LazyLock::new(|| sorted(NOT_A_KEY));
static CREDENTIAL_CONTEXT_SORTED: LazyLock<Vec<&str>> =
    LazyLock::new(|| sorted(CREDENTIAL_CONTEXT));

thread_local! {
    /// Names judged lately, and the verdicts: a log names the same few keys again and
    /// again, and a line of one name repeated asks about it at every repeat.
    static SECRET_NAMES: RefCell<HashMap<Box<str>, bool>> = RefCell::new(HashMap::new());
    static CONTEXT_NAMES: RefCell<HashMap<Box<str>, bool>> = RefCell::new(HashMap::new());
}

/// Words that make a following `key` (or `id` for `secret`) a secret's.
#[rustfmt::skip]
const KEY_QUALIFIERS: &[&str] = &[
    "api", "access", "private", "secret", "signing", "encryption", "master", "account", "client",
    "license", "app", "auth", "service",
];
/// Last parts of names that hold a location, a reference or a fact about the secret, not
/// the secret (`secretKeyRef`, `auth.user`, `token_timeout`), or that make the name an error's (`NoCredentialsError: Unable to locate credentials`).
#[rustfmt::skip]
const NOT_A_VALUE: &[&str] = &[
    "file", "path", "dir", "env", "length", "len", "expiry", "expires", "type", "error", "errors",
    "exception", "err", "warning", "failure", "failed", "invalid", "expired", "missing", "required",
    "mismatch", "id", "ids", "name", "names", "arn", "alias", "label", "endpoint", "url", "uri",
    "fingerprint", "hint", "version", "algorithm", "format", "rotation", "count", "ttl", "ref",
    "refs", "reference", "selector", "user", "username", "users", "method", "mode", "provider",
    "mechanism", "realm", "scheme", "enabled", "disabled", "host", "port", "policy", "strategy",
    "timeout", "level", "at", "header", "source", "encryption", "column", "sock", "socket",
    "stdin", "prompt", "command", "cmd", "fd",
];

/// First words of a name that make it a switch about a secret, which takes no value:
/// `--ask-pass`, `--ask-vault-pass`, `--skip-password`, `--no-password`, `--prompt-password`.
#[rustfmt::skip]
const SWITCH_WORDS: &[&str] = &["ask", "skip", "no", "prompt", "without"];

/// Words before `token` that make it the cursor of a paged listing, which grants nothing on
/// its own: `page_token`, `nextPageToken`, AWS `NextToken`, `continuationToken`, a sync or
/// change-stream resume token. The value still goes if its shape says credential.
const CURSOR_WORDS: &[&str] = &[
    "page",
    "next",
    "continuation",
    "pagination",
    "sync",
    "resume",
    "cursor",
];

/// Secret words that stay secret with `id` after them: a session id, a Vault `secret_id`.
const SECRET_IDS: &[&str] = &["session", "secret"];

/// Words that, in a name, make a random-looking value a credential (`MAILGUN_KEY`,
/// `datadog_app: …`) though the name alone is not a secret's: `key` in any position and the
/// names of providers whose tokens have no shape of their own.
#[rustfmt::skip]
const CREDENTIAL_CONTEXT: &[&str] = &[
    "key", "keys", "pat", "sid", "hmac", "license", "licence", "adafruit", "adobe", "airtable",
    "algolia", "alibaba", "asana", "atlassian", "confluence", "jira", "bitbucket", "bittrex",
    "meraki", "cloudflare", "codecov", "cohere", "coinbase", "confluent", "contentful", "datadog",
    "discord", "droneci", "dropbox", "etsy", "facebook", "fastly", "finicity", "finnhub", "flickr",
    "freshbooks", "gitter", "gocardless", "heroku", "hubspot", "intercom", "jfrog", "artifactory",
    "kraken", "kucoin", "launchdarkly", "linear", "linkedin", "lob", "looker", "mailchimp",
    "mailgun", "mapbox", "mattermost", "messagebird", "netlify", "newrelic", "nytimes", "okta",
    "plaid", "rapidapi", "sendbird", "sentry", "snyk", "sonar", "squarespace", "sumo", "sumologic",
    "telegram", "travis", "twitch", "twitter", "typeform", "yandex", "zendesk", "mistral",
    "deepgram", "assemblyai", "clarifai", "pusher", "ably", "mixpanel", "amplitude", "rollbar",
    "bugsnag", "pagerduty", "opsgenie", "splunk", "loggly", "logdna", "papertrail", "vercel",
    "linode", "vultr", "hetzner", "ovh", "ibm", "azure", "gitea", "gogs", "trello", "todoist",
    "clickup", "freshdesk", "mailjet", "postmark", "vonage", "nexmo", "plivo", "sinch", "twilio",
    "ngrok", "pushover", "pushbullet", "openweather", "mollie", "paystack", "razorpay", "braintree",
    "paypal", "adyen", "airbrake", "honeybadger", "raygun", "logz", "coveralls", "circleci",
    "appveyor", "buildkite", "bitrise", "saucelabs", "browserstack", "lambdatest", "shodan",
    "censys", "virustotal", "clearbit", "fullcontact", "ipinfo", "ipstack", "positionstack",
    "mapquest", "tomtom", "unsplash", "pexels", "giphy", "spotify", "soundcloud", "youtube",
    "vimeo", "webex", "calendly", "docusign", "hellosign", "pandadoc", "egnyte", "backblaze",
    "wasabi", "storj", "pinata", "infura", "etherscan", "moralis", "bscscan", "polygonscan",
    "covalent", "nomics", "coinmarketcap", "coingecko", "stripe", "shopify", "firebase", "supabase",
    "fauna", "upstash", "aiven", "algolia", "meilisearch", "typesense", "pinecone", "weaviate",
    "qdrant", "openai", "anthropic", "huggingface", "replicate", "stability", "elevenlabs", "groq",
    "perplexity", "fireworks", "voyage", "jina", "serpapi", "tavily",
];

/// Words that are not values but the start of a sentence about one (`password: must be at
/// least 12 characters`, `token: missing`, `--password used`). Only bare values are checked.
#[rustfmt::skip]
pub const NOT_SECRETS: &[&str] = &[
    "must", "missing", "required", "expired", "invalid", "incorrect", "wrong", "none", "null",
    "nil", "used", "empty", "not", "is", "was", "too", "should", "cannot", "needs", "changed",
    "reset", "updated", "mismatch", "true", "false", "set", "unset", "ok", "rejected", "denied",
    "via", "from", "in", "on", "at", "for", "with", "of", "to", "and", "or", "the", "a", "an",
    "instead", "option", "flag", "argument", "parameter", "field", "will", "may", "can", "has",
    "have", "are", "be", "only", "this", "that", "when", "if", "please", "see", "failed",
    "failure", "error", "login", "logout", "refresh", "revoked", "unauthorized", "forbidden",
    "new", "old", "current", "no", "yes", "unsupported", "unknown", "unavailable", "got",
];

/// Extensions of source and configuration files: a name that ends in one after a `.` is a
/// file's (`TokenService.java:142`, `auth.py:7`, `secrets.yaml: …`), not a secret's.
#[rustfmt::skip]
const FILE_EXTENSIONS: &[&str] = &[
    "java", "kt", "kts", "scala", "groovy", "gradle", "py", "pyx", "rb", "go", "rs", "js", "mjs",
    "cjs", "ts", "tsx", "jsx", "vue", "php", "cs", "fs", "vb", "swift", "m", "mm", "c", "h", "cc",
    "cpp", "cxx", "hpp", "pl", "pm", "lua", "sh", "bash", "zsh", "ps1", "ex", "exs", "erl", "hs",
    "clj", "dart", "jl", "sql", "yaml", "yml", "json", "toml", "ini", "cfg", "conf", "xml",
    "properties", "tf", "tfvars", "txt", "log", "md", "html",
];

/// Whether a name is a file's: it ends in `.` and one of [`FILE_EXTENSIONS`].
pub fn names_a_file(name: &str) -> bool {
    name.rsplit_once('.')
        .is_some_and(|(stem, ext)| !stem.is_empty() && FILE_EXTENSIONS.contains(&ext))
}

/// Whether a name (`DB_PASSWORD`, `apiKey`, `--auth-token`, `x.client_secret`) is that of
/// a secret.
pub fn names_a_secret(name: &str) -> bool {
    // The shortest secret word has two letters (`pw`).
    if name.len() < 2 {
        return false;
    }
    remembered(&SECRET_NAMES, name, judge_secret_name)
}

/// [`names_a_secret`] for a name of two bytes or more, judged afresh.
fn judge_secret_name(name: &str) -> bool {
    let name = &*fold_fullwidth(name);
    let parts = split_name(name.trim_start_matches('-'));
    // `pAsSwOrD`: humps in odd places; the word is there once the case is ignored.
    let folded = name.to_ascii_lowercase();
    if let [.., before, last] = parts.as_slice()
        && last == "id"
        && SECRET_IDS.contains(&before.as_str())
    {
        return true;
    }
    if parts
        .last()
        .is_some_and(|last| listed(&NOT_A_VALUE_SORTED, last))
        || parts.len() > 1 && SWITCH_WORDS.contains(&parts[0].as_str())
        || names_a_cursor(&parts)
    {
        return false;
    }
    if names_in_another_language(&parts) {
        return true;
    }
    parts.iter().enumerate().any(|(i, part)| {
        listed(&SECRET_WORDS_SORTED, part)
            // Run-together names such as PGPASSWORD, MYSQL_ROOTPASSWD or NGROK_AUTHTOKEN.
            || part.contains("password")
            || part.contains("passwd")
            // Not a secretary, nor AWS Secrets Manager or Google Secret Manager, services.
            || part.contains("secret") && !part.contains("secretar")
                && !part.contains("secretsmanager") && !part.contains("secretmanager")
            || part.ends_with("token") || part.ends_with("tokens")
            || part.ends_with("apikey")
            || (part == "key" && i > 0 && KEY_QUALIFIERS.contains(&parts[i - 1].as_str()))
            // `ACME_KEY`, `SENDGRID_KEY`: a vendor's key, as the last word after another,
            // unless that word makes it a database's or cache's (`primary_key`, `cache_key`).
            || (part == "key" && i > 0 && i + 1 == parts.len()
                && !listed(&NOT_A_KEY_SORTED, &parts[i - 1]))
    }) || folded.contains("password")
        || folded.contains("passwd")
}

/// First words of a function named for a secret that make it one that looks the secret up
/// or makes one, so its arguments are names, paths or options, not the secret:
/// `getPassword("db")`, `read_token(path)`, `delete_secret("prod")`, `create_token("ci")`.
#[rustfmt::skip]
const LOOKUP_VERBS: &[&str] = &[
    "get", "fetch", "read", "load", "lookup", "find", "resolve", "retrieve", "has", "is", "delete",
    "remove", "del", "unset", "list", "describe", "require", "exists", "create", "generate", "new",
    "issue", "request", "rotate", "open", "print", "log", "show",
];

/// Whether a function's name says that it is given a secret (`setPassword`, `set_api_key`,
/// `with_token`, `bearer_auth`, `SecretStr`): a secret's name whose first word is none of
/// [`LOOKUP_VERBS`].
pub fn names_a_secret_input(function: &str) -> bool {
    names_a_secret(function)
        && split_name(function)
            .first()
            .is_none_or(|verb| !LOOKUP_VERBS.contains(&verb.as_str()))
}

/// Functions whose signature puts a password at a known place, by their name in lower case
/// without `_`, and the 0-based position of the password among the arguments: a user then
/// a password (`login("admin", "…")`, `smtp.login(user, "…")`, `authenticate(user, "…")`,
/// LDAP `simple_bind_s(dn, "…")`), or a URL or host, a user, then a password (JDBC
/// `DriverManager.getConnection(url, user, "…")`, PHP `new PDO(dsn, user, "…")`,
/// `mysqli_connect(host, user, "…")`).
#[rustfmt::skip]
pub const PASSWORD_ARGUMENTS: &[(&str, usize)] = &[
    ("login", 1), ("logon", 1), ("signin", 1), ("authenticate", 1), ("simplebind", 1),
    ("simplebinds", 1), ("bindsimple", 1), ("plainlogin", 1), ("getconnection", 2),
    ("pdo", 2), ("mysqli", 2), ("mysqliconnect", 2), ("mysqlconnect", 2),
    ("mysqlirealconnect", 3),
];

/// Credential words of two words, the first with its blank: `mot de passe`, `كلمة المرور`.
const FOREIGN_PHRASES: &[(&str, &str)] = &[
    ("mot de ", "passe"),
    ("كلمة ", "المرور"),
    ("كلمة ", "السر"),
    ("mật ", "khẩu"),
];

/// Whether `name`, after the text `before` it, ends a credential phrase of several words
/// (`mot de passe: …`).
pub fn names_a_secret_after(before: &str, name: &str) -> bool {
    FOREIGN_PHRASES.iter().any(|(head, last)| {
        name.len() == last.len()
            && name.to_lowercase() == *last
            && before.len() >= head.len()
            && before.is_char_boundary(before.len() - head.len())
            && before[before.len() - head.len()..].to_lowercase() == *head
    })
}

/// Whether a name's parts end in a credential word of [`FOREIGN_WORDS`]: one part
/// (`Datenbankpasswort`, `数据库密码`), or the parts run together (`mot_de_passe`).
fn names_in_another_language(parts: &[String]) -> bool {
    let joined = parts.concat();
    FOREIGN_WORDS
        .iter()
        .any(|w| joined.ends_with(w) || parts.iter().any(|p| p.ends_with(w)))
}

/// `name` with fullwidth forms of ASCII (U+FF01 to U+FF5E, `ｐａｓｓｗｏｒｄ`) read as ASCII.
pub fn fold_fullwidth(name: &str) -> std::borrow::Cow<'_, str> {
    let fullwidth = |c: char| ('\u{FF01}'..='\u{FF5E}').contains(&c);
    if !name.contains(fullwidth) {
        return std::borrow::Cow::Borrowed(name);
    }
    let ascii = |c: char| match fullwidth(c) {
        true => char::from_u32(c as u32 - 0xFEE0).unwrap_or(c),
        false => c,
    };
    std::borrow::Cow::Owned(name.chars().map(ascii).collect())
}

/// `page_token`, `nextPageToken`, `pagetoken`: a cursor (see [`CURSOR_WORDS`]).
fn names_a_cursor(parts: &[String]) -> bool {
    let Some(last) = parts.last() else {
        return false;
    };
    let Some(head) = last
        .strip_suffix("tokens")
        .or_else(|| last.strip_suffix("token"))
    else {
        return false;
    };
    let before = if head.is_empty() {
        parts.len().checked_sub(2).map(|i| parts[i].as_str())
    } else {
        Some(head)
    };
    before.is_some_and(|word| CURSOR_WORDS.contains(&word))
}

/// Whether a name that is not a secret's still says that a random-looking value is a
/// credential: it holds `key` (`MAILGUN_KEY`, `licenseKey`) or a provider's name.
pub fn names_a_credential_context(name: &str) -> bool {
    if name.len() < 3 {
        return false;
    }
    remembered(&CONTEXT_NAMES, name, judge_context_name)
}

/// [`names_a_credential_context`] for a name of three bytes or more, judged afresh.
fn judge_context_name(name: &str) -> bool {
    let parts = split_name(name.trim_start_matches('-'));
    if parts
        .last()
        .is_some_and(|last| listed(&NOT_A_VALUE_SORTED, last) || listed(&NOT_A_KEY_SORTED, last))
        || parts.iter().any(|p| listed(&NOT_A_KEY_SORTED, p))
    {
        return false;
    }
    parts.iter().any(|part| {
        listed(&CREDENTIAL_CONTEXT_SORTED, part) || part.ends_with("key") && part.len() > 3
    })
}

/// Words before `key` that make it a database or cache key, not a credential.
#[rustfmt::skip]
const NOT_A_KEY: &[&str] = &[
    "primary", "foreign", "partition", "sort", "cache", "routing", "object", "row", "hash", "shard",
    "lookup", "dedup", "idempotency", "unique", "composite", "public", "pub", "monkey", "hotkey",
    "turkey", "whiskey", "jockey", "hockey", "donkey", "s3", "bucket", "group", "message",
    "event", "map", "dict", "index", "table", "cluster", "natural", "surrogate", "join",
    "sharding", "order", "parameter",
];

/// A value that can only be a generated credential, even in prose: 20 to 512 letters and
/// digits (and `_`), with digits, and mixed case, or 32+ hex, or one case with a quarter
/// digits. `v2-deps-3f2a1b4c` and `SHA256:…` are not.
pub fn looks_generated_strictly(value: &str) -> bool {
    let b = value.as_bytes();
    if !(20..=512).contains(&b.len())
        || !b.iter().all(|&c| c.is_ascii_alphanumeric() || c == b'_')
        || !b.iter().any(u8::is_ascii_digit)
    {
        return false;
    }
    let upper = b.iter().any(u8::is_ascii_uppercase);
    let lower = b.iter().any(u8::is_ascii_lowercase);
    let digits = b.iter().filter(|c| c.is_ascii_digit()).count();
    let hex = b.iter().all(u8::is_ascii_hexdigit);
    upper && lower || hex && b.len() >= 32 || !hex && digits * 4 >= b.len()
}

/// A value shaped like a generated credential: 16 to 512 characters of the token alphabet,
/// with letters and digits, not a path, and not mostly words.
pub fn looks_generated(value: &str) -> bool {
    let b = value.as_bytes();
    if !(GENERATED_MIN..=512).contains(&b.len())
        || !b.iter().all(|&c| generated_char(c))
        || !b.iter().any(u8::is_ascii_digit)
        || !b.iter().any(u8::is_ascii_alphabetic)
        || b.starts_with(b"/")
        || b.starts_with(b".")
    {
        return false;
    }
    // A path to a file (`customers/2024/05/01.csv`, an S3 object's key) is no credential.
    let extension = value.rsplit_once('.').is_some_and(|(_, ext)| {
        (1..=5).contains(&ext.len()) && ext.bytes().all(|c| c.is_ascii_lowercase())
    });
    if value.contains('/') && extension {
        return false;
    }
    let separators = b.iter().filter(|c| b"_-/.".contains(c)).count();
    // Dotted versions, paths and kebab-case names have many separators; UUIDs have four.
    let uuid_like = b.len() == 36 && separators == 4;
    uuid_like || separators * 6 <= b.len()
}

/// The fewest characters of a value [`looks_generated`] takes.
pub const GENERATED_MIN: usize = 16;

/// Whether `c` can be part of a value [`looks_generated`] takes.
pub fn generated_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || b"_-+/=.~".contains(&c)
}

/// `DB_PASSWORD` → [db, password]; `apiKey` → [api, key]; `X-Amz-Signature` → [x, amz,
/// signature].
fn split_name(name: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut current = String::new();
    let mut prev_lower = false;
    for c in name.chars() {
        if matches!(c, '_' | '-' | '.') {
            parts.push(std::mem::take(&mut current));
            prev_lower = false;
            continue;
        }
        if c.is_uppercase() && prev_lower {
            parts.push(std::mem::take(&mut current));
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
        current.extend(c.to_lowercase());
    }
    parts.push(current);
    parts.retain(|p| !p.is_empty());
    parts
}
