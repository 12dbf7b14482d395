//! The scrubbing corpus under tests/corpus, scored: every secret line must lose its marked
//! parts, every benign line must survive byte for byte, and every stack trace must collapse
//! to its error line. The test prints the scores and fails below 100 %.

use std::time::Duration;

use crontap_run::report::heartbeat::HeartbeatUrl;
use crontap_run::report::summary;
use crontap_run::run::outcome::Outcome;
use crontap_scrub::{REDACTED, Scrubber};

const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/corpus");
const LINES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/crates/scrub/tests/corpus");

fn scrubber() -> Scrubber {
    let url = HeartbeatUrl::parse("https://hb.example/ping/corpus-token-123", "corpus").unwrap();
    Scrubber::new(
        url.secrets(),
        [("DB_PASSWORD".into(), "correct-horse-battery".into())],
    )
}

/// Deterministic characters from `alphabet`, so fixtures are stable but look random.
fn chars(seed: u64, len: usize, alphabet: &str) -> String {
    let alphabet: Vec<char> = alphabet.chars().collect();
    let mut state = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..len)
        .map(|_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            alphabet[((state >> 33) % alphabet.len() as u64) as usize]
        })
        .collect()
}

const BASE62: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const URLSAFE: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// Token formats by fixture name, as the providers document them. `{alphabet:n}` is `n`
/// generated characters: `b62`, `url` (base64url), `b64`, `hex`, `an` (lower case and
/// digits), `un` (upper case and digits), `low`, `dig`, `b32` (bech32); `{uuid}` is a UUID.
const FORMATS: &[(&str, &str)] = &[
    ("ghp", "ghp_{b62:36}"),
    ("github_pat", "github_pat_{b62:22}_{b62:59}"),
    ("glpat", "glpat-{url:20}"),
    ("gldt", "gldt-{url:20}"),
    ("glrt", "glrt-t1_{url:27}.01.{an:9}"),
    ("glsa", "glsa_{b62:32}_{hex:8}"),
    ("gitlab_runner", "GR1348941{url:20}"),
    ("atbb", "ATBB{b62:32}{hex:8}"),
    ("bbdc", "BBDC-{b62:44}"),
    ("circleci", "CCIPAT_{b62:22}_{hex:40}"),
    ("buildkite", "bkua_{hex:40}"),
    ("sonar", "squ_{hex:40}"),
    ("sourcegraph", "sgp_{hex:16}_{hex:40}"),
    ("atlassian", "ATATT3xFfGF0{url:170}={hex:8}"),
    ("harness", "pat.{url:22}.{b62:24}.{b62:20}"),
    ("xoxb", "xoxb-{dig:12}-{dig:13}-{b62:24}"),
    ("xoxp", "xoxp-{dig:12}-{dig:12}-{dig:13}-{hex:32}"),
    ("xapp", "xapp-1-A{un:10}-{dig:13}-{hex:64}"),
    (
        "slack_webhook",
        "https://hooks.slack.com/services/T{un:8}/B{un:10}/{b62:24}",
    ),
    (
        "discord_webhook",
        "https://discord.com/api/webhooks/{dig:18}/{url:68}",
    ),
    (
        "teams_webhook",
        "https://acme.webhook.office.com/webhookb2/{uuid}@{uuid}/IncomingWebhook/{an:32}/{uuid}",
    ),
    ("discord_bot", "MT{url:24}.{url:6}.{url:38}"),
    ("telegram", "{dig:10}:AA{url:33}"),
    ("stripe_sk", "sk_live_{b62:99}"),
    ("stripe_rk", "rk_test_{b62:24}"),
    ("whsec", "whsec_{b62:32}"),
    ("square", "sq0csp-{url:43}"),
    ("square_eaaa", "EAAA{url:60}"),
    ("shopify", "shpat_{hex:32}"),
    ("shippo", "shippo_live_{hex:40}"),
    ("flutterwave", "FLWSECK_TEST-{hex:32}-X"),
    ("razorpay", "rzp_live_{b62:14}"),
    ("paddle", "pdl_live_apikey_{b62:40}"),
    ("mercadopago", "APP_USR-{dig:16}-{dig:6}-{hex:32}-{dig:9}"),
    ("woocommerce", "cs_{hex:40}"),
    ("braintree", "access_token$production${an:16}${hex:32}"),
    ("plaid", "access-production-{uuid}"),
    ("clickup", "pk_{dig:8}_{un:32}"),
    ("elevenlabs", "sk_{hex:48}"),
    ("aws_akid", "AKIA{un:16}"),
    ("aws_asia", "ASIA{un:16}"),
    ("aws_secret", "{b64:40}"),
    ("aws_session", "IQoJb3JpZ2luX2VjE{b64:300}"),
    ("bedrock", "ABSK{b64:130}"),
    ("google_aiza", "AIza{url:35}"),
    ("google_ya29", "ya29.{url:120}"),
    ("google_refresh", "1//0{url:100}"),
    ("gocspx", "GOCSPX-{url:28}"),
    ("goog_hmac", "GOOG1{un:56}"),
    ("azure_key", "{b64:86}=="),
    ("azure_ad", "{b62:3}8Q~{url:34}"),
    ("alibaba", "LTAI{b62:20}"),
    ("tencent", "AKID{b62:32}"),
    ("volcengine", "AKLT{url:44}"),
    ("scaleway", "SCW{un:17}"),
    ("yandex_key", "AQVN{url:36}"),
    ("yandex_iam", "t1.{url:40}.{url:86}"),
    ("digitalocean", "dop_v1_{hex:64}"),
    ("cloudflare_ca", "v1.0-{hex:24}-{hex:146}"),
    ("akamai", "akab-{an:16}-{an:16}"),
    ("heroku", "HRKU-AA{url:58}"),
    ("fly", "fo1_{url:43}"),
    ("render", "rnd_{b62:32}"),
    ("netlify", "nfp_{b62:40}"),
    ("supabase", "sbp_{hex:40}"),
    ("neon", "napi_{an:64}"),
    ("planetscale", "pscale_pw_{url:43}"),
    ("databricks", "dapi{hex:32}"),
    ("dbt", "dbtc_{url:40}"),
    ("clickhouse", "4b1d{b62:38}"),
    ("tailscale", "tskey-auth-{b62:12}-{b62:32}"),
    ("openshift", "sha256~{url:43}"),
    ("pulumi", "pul-{hex:40}"),
    ("prefect", "pnu_{b62:36}"),
    ("doppler", "dp.st.{b62:43}"),
    ("vault", "hvs.{url:92}"),
    ("vault_legacy", "s.{b62:23}7"),
    ("onepassword", "A3-{un:6}-{un:11}-{un:5}-{un:5}-{un:5}"),
    ("onepassword_sa", "ops_eyJ{b64:250}"),
    ("age", "AGE-SECRET-KEY-1{b32:58}"),
    ("terraform", "{an:14}.atlasv1.{url:67}"),
    ("scalingo", "tk-us-{url:48}"),
    ("infracost", "ico-{b62:32}"),
    ("frameio", "fio-u-{url:64}"),
    ("dnkey", "dnkey-{url:26}-{url:52}"),
    ("dynatrace", "dt0c01.{un:24}.{un:64}"),
    ("openai", "sk-proj-{url:64}T3BlbkFJ{url:64}"),
    ("openai_legacy", "sk-{b62:20}T3BlbkFJ{b62:20}"),
    ("anthropic", "sk-ant-api03-{url:93}AA"),
    ("openrouter", "sk-or-v1-{hex:64}"),
    ("langfuse", "sk-lf-{uuid}"),
    ("deepseek", "sk-{hex:32}"),
    ("groq", "gsk_{b62:52}"),
    ("xai", "xai-{b62:80}"),
    ("replicate", "r8_{b62:37}"),
    ("pinecone", "pcsk_{b62:5}_{b62:60}"),
    ("nvidia", "nvapi-{url:64}"),
    ("tavily", "tvly-dev-{b62:32}"),
    ("langsmith", "lsv2_pt_{hex:32}_{hex:10}"),
    ("perplexity", "pplx-{b62:48}"),
    ("hf", "hf_{b62:34}"),
    ("hf_org", "api_org_{b62:34}"),
    ("fireworks", "fw_{b62:23}3"),
    ("voyage", "pa-{url:42}5"),
    ("npm", "npm_{b62:36}"),
    ("pypi", "pypi-AgEIcHlwaS5vcmc{url:120}"),
    ("dockerhub", "dckr_pat_{url:27}"),
    ("rubygems", "rubygems_{hex:48}"),
    ("clojars", "CLOJARS_{an:60}"),
    ("nuget", "oy2{an:43}"),
    ("crates", "cio{b62:31}9"),
    ("artifactory", "AKCp{b62:69}"),
    ("artifactory_ref", "cmVmdGtuOjAxOjE3{b62:48}"),
    ("readme", "rdme_{an:70}"),
    ("sendgrid", "SG.{url:22}.{url:43}"),
    ("brevo", "xkeysib-{hex:64}-{b62:16}"),
    ("mailgun", "key-{hex:32}"),
    ("mailgun_pub", "pubkey-{hex:32}"),
    ("mailchimp", "{hex:32}-us21"),
    ("mandrill", "md-{url:21}4"),
    ("resend", "re_{b62:8}_{b62:24}"),
    ("twilio_sk", "SK{hex:32}"),
    ("intercom", "dG9rOj{b64:54}="),
    ("fcm", "AAAA{url:7}:APA91b{url:134}"),
    ("twitter_bearer", "AAAAAAAAAAAAAAAAAAAAA{b62:90}"),
    ("facebook_app", "{dig:15}|{url:27}"),
    ("facebook_token", "EAAC{b62:120}"),
    ("instagram", "IGQV{url:140}"),
    ("newrelic", "NRAK-{un:27}"),
    ("newrelic_insert", "NRII-{url:32}"),
    ("sentry", "sntryu_{hex:64}"),
    ("posthog", "phx_{b62:47}"),
    ("honeycomb", "hcaik_{an:58}"),
    ("postman", "PMAK-{hex:24}-{hex:34}"),
    ("linear", "lin_api_{b62:40}"),
    ("notion", "ntn_{dig:11}{b62:35}"),
    ("notion_legacy", "secret_{b62:43}"),
    ("figma", "figd_{url:40}"),
    ("airtable", "pat{b62:14}.{hex:64}"),
    ("hubspot", "pat-na1-{uuid}"),
    ("contentful", "CFPAT-{url:43}"),
    ("octopus", "API-{un:26}"),
    ("launchdarkly", "api-{uuid}"),
    ("adobe", "p8e-{b62:32}"),
    ("easypost", "EZAK{b62:54}"),
    ("duffel", "duffel_test_{url:43}"),
    ("intra42", "s-s4t2ud-{hex:64}"),
    ("settlemint", "sm_aat_{b62:16}"),
    ("zoho", "1000.{hex:32}.{hex:32}"),
    ("salesforce", "00D{b62:15}!{b62:96}"),
    ("dropbox", "sl.{url:140}"),
    ("mapbox", "pk.eyJ{url:60}.{url:22}"),
    ("grafana_key", "eyJrIjoi{b62:72}"),
    ("asana", "1/{dig:16}:{hex:32}"),
    ("maxmind", "{b62:6}_{b62:29}_mmk"),
    (
        "zapier",
        "https://hooks.zapier.com/hooks/catch/{dig:7}/{an:7}/",
    ),
    (
        "ifttt",
        "https://maker.ifttt.com/trigger/backup/with/key/{url:22}",
    ),
    (
        "jwt",
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJjb3JwdXMifQ.{url:43}",
    ),
    (
        "jwt_b64",
        "ZXlKaGJHY2lPaUpJVXpJMU5pSjkuZXlKemRXSWlPaUl4In0{b64:60}",
    ),
    // Random strings of one case (no provider prefix): base36 and base32.
    ("base36", "{an:60}"),
    ("base32", "{b32u:52}"),
    ("hex_secret", "{hex:40}"),
];

/// A token of the given family, shaped as its provider documents it.
fn fixture(family: &str) -> Option<String> {
    let format = FORMATS.iter().find(|(name, _)| *name == family)?.1;
    let mut seed = family
        .bytes()
        .fold(7u64, |h, b| h.wrapping_mul(31).wrapping_add(u64::from(b)));
    let mut out = String::new();
    let mut rest = format;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let close = open + rest[open..].find('}').expect("every { has a }");
        let spec = &rest[open + 1..close];
        seed += 1;
        let piece = if spec == "uuid" {
            let h = |n, s| chars(s, n, "0123456789abcdef");
            format!(
                "{}-{}-4{}-a{}-{}",
                h(8, seed),
                h(4, seed + 100),
                h(3, seed + 200),
                h(3, seed + 300),
                h(12, seed + 400)
            )
        } else {
            let (alphabet, len) = spec.split_once(':').expect("alphabet:length");
            let alphabet = match alphabet {
                "b62" => BASE62,
                "url" => URLSAFE,
                "b64" => "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/",
                "hex" => "0123456789abcdef",
                "an" => "abcdefghijklmnopqrstuvwxyz0123456789",
                "un" => "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
                "low" => "abcdefghijklmnopqrstuvwxyz",
                "dig" => "0123456789",
                "b32" => "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L",
                "b32u" => "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567",
                other => panic!("unknown alphabet {other}"),
            };
            chars(seed, len.parse().expect("a length"), alphabet)
        };
        out.push_str(&piece);
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    Some(out)
}

/// Expands `\n` and `@name` fixtures; returns the input text and the marked parts.
fn expand(line: &str) -> (String, Vec<String>) {
    let line = line.replace("\\n", "\n");
    let mut text = String::new();
    let mut marked = Vec::new();
    let mut rest = line.as_str();
    while let Some(start) = rest.find('«') {
        text.push_str(&rest[..start]);
        let after = &rest[start + '«'.len_utf8()..];
        let end = after.find('»').expect("every « has a »");
        let secret = expand_fixtures(&after[..end]);
        text.push_str(&secret);
        marked.push(secret);
        rest = &after[end + '»'.len_utf8()..];
    }
    text.push_str(rest);
    (expand_fixtures(&text), marked)
}

fn expand_fixtures(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find('@') {
        let name_len = rest[at + 1..]
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len() - at - 1);
        let name = &rest[at + 1..at + 1 + name_len];
        // `@name` after a word character is an e-mail address or a version, not a fixture.
        let after_word = at > 0 && rest.as_bytes()[at - 1].is_ascii_alphanumeric();
        out.push_str(&rest[..at]);
        match fixture(name).filter(|_| !after_word) {
            Some(token) => out.push_str(&token),
            None => out.push_str(&rest[at..at + 1 + name_len]),
        }
        rest = &rest[at + 1 + name_len..];
    }
    out.push_str(rest);
    out
}

fn cases(file: &str) -> Vec<String> {
    std::fs::read_to_string(format!("{LINES}/{file}"))
        .unwrap()
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_owned)
        .collect()
}

/// Whether a piece of the secret `marked` (a run of four letters or digits or more) is in
/// `out` more often than in the rest of `input`: a secret cut in two by a marker is kept
/// as surely as one left whole (`p\"ss w0rd` redacted up to its escaped quote kept
/// `w0rd`).
fn piece_kept(input: &str, marked: &str, out: &str) -> bool {
    let rest = input.replacen(marked, " ", 1);
    marked
        .split(|c: char| !c.is_alphanumeric())
        .filter(|piece| piece.chars().count() >= 4)
        .any(|piece| out.matches(piece).count() > rest.matches(piece).count())
}

#[test]
fn corpus_scores_100_percent() {
    let scrubber = scrubber();
    let mut failures = Vec::new();

    let secrets = cases("secrets.txt");
    for line in &secrets {
        let (input, marked) = expand(line);
        // A fixture (`«@name»`) stands for a whole webhook URL or token, whose host and
        // path prefix stay by design; a literal mark is the secret alone.
        let literal = !line.contains("«@");
        let out = scrubber.scrub(&input);
        let leaked: Vec<&String> = marked
            .iter()
            .filter(|m| out.contains(m.trim()) || literal && piece_kept(&input, m, &out))
            .collect();
        if !leaked.is_empty() || !out.contains(REDACTED) {
            failures.push(format!("secret kept: {line:?}\n    -> {out:?}"));
        }
    }
    let secrets_failed = failures.len();

    let benign = cases("benign.txt");
    for line in &benign {
        let out = scrubber.scrub(line);
        if out != *line {
            failures.push(format!("benign changed: {line:?}\n    -> {out:?}"));
        }
    }
    let benign_failed = failures.len() - secrets_failed;

    let mut traces: Vec<_> = std::fs::read_dir(format!("{CORPUS}/traces"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    traces.sort();
    for path in &traces {
        let text = std::fs::read_to_string(path).unwrap();
        let (first, body) = text.split_once('\n').unwrap();
        let expect = first
            .strip_prefix("# expect: ")
            .expect("a trace starts with # expect:");
        let msg = summary::failure_message(
            &Outcome::Exited(1),
            Duration::from_secs(1),
            b"",
            body.as_bytes(),
            &scrubber,
            2048,
        );
        let want = format!("exit 1 after 1s: {expect}");
        if msg != want {
            failures.push(format!(
                "trace {}: got {msg:?}, want {want:?}",
                path.display()
            ));
        }
    }
    let traces_failed = failures.len() - secrets_failed - benign_failed;

    let score = |total: usize, failed: usize| {
        format!(
            "{}/{total} ({:.0} %)",
            total - failed,
            100.0 * (total - failed) as f64 / total as f64
        )
    };
    println!(
        "corpus: secrets {}, benign {}, traces {}",
        score(secrets.len(), secrets_failed),
        score(benign.len(), benign_failed),
        score(traces.len(), traces_failed)
    );
    assert!(
        failures.is_empty(),
        "{} corpus failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
