//! Tests of the provider table: for every family, a token generated from its documented
//! format is found (and only its secret part), and a look-alike is not.

use super::*;

const UPPER: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
const LOWER: &str = "abcdefghijklmnopqrstuvwxyz";
const DIGITS: &str = "0123456789";
const HEX: &str = "0123456789abcdef";

/// Deterministic pseudo-random text (xorshift64*), so that no fixture is a literal.
fn rnd(alphabet: &str, n: usize, seed: u64) -> String {
    let a = alphabet.as_bytes();
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            let r = x.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 33;
            char::from(a[(r % a.len() as u64) as usize])
        })
        .collect()
}

/// One case per family: (family, text kept in front, secret, a look-alike that is no
/// token). `{alphabet:n}` stands for `n` generated characters (`b62`, `url`, `b64`, `hex`,
/// `an` lower case and digits, `un` upper case and digits, `low`, `dig`, `b32` bech32) and
/// `{uuid}` for a UUID, so that no fixture is a literal.
#[rustfmt::skip]
const CASES: &[(&str, &str, &str, &str)] = &[
    ("github-token", "", "ghp_{b62:36}", "ghp_{b62:20}"),
    ("github-fine-grained", "", "github_pat_{b62:22}_{b62:59}", "github_pat_is_a_prefix"),
    ("gitlab-token", "", "glpat-{url:20}", "glpat-short"),
    ("grafana-token", "", "glsa_{b62:32}_{hex:8}", "glsa_x"),
    ("gitlab-runner-registration", "", "GR1348941{url:20}", "GR1348941 build"),
    ("bitbucket-app-password", "", "ATBB{b62:32}", "ATBB-x"),
    ("bitbucket-dc-token", "", "BBDC-{b64:44}", "BBDC-1"),
    ("circleci-token", "", "CCIPAT_{b62:22}_{hex:40}", "CCIPAT_x"),
    ("buildkite-token", "", "bkua_{hex:40}", "bkua_{low:40}"),
    ("sonarqube-token", "", "squ_{hex:40}", "squ_notes"),
    ("sourcegraph-token", "", "sgp_{hex:16}_{hex:40}", "sgp_local"),
    ("atlassian-token", "", "ATATT3{url:180}", "ATATT3x"),
    ("atlassian-cookie-token", "", "ATCTT3{url:180}", "ATCTT3x"),
    ("harness-token", "", "pat.{url:22}.{b62:24}.{b62:20}", "pat.example.com"),
    ("slack-token", "", "xoxb-{dig:12}-{b62:24}", "xoxb-"),
    ("slack-app-token", "", "xapp-1-A{un:10}-{an:64}", "xapp-x"),
    ("slack-webhook", "hooks.slack.com/services/", "T{un:8}/B{un:10}/{b62:24}", "hooks.slack.com/services/"),
    ("discord-webhook", "discord.com/api/webhooks/123456789012345678/", "{url:68}", "discord.com/api/webhooks/"),
    ("discord-mfa-token", "", "mfa.{url:84}", "mfa.enabled"),
    ("teams-webhook", "webhook.office.com/webhookb2/", "{uuid}@{uuid}/IncomingWebhook/{an:32}/{uuid}", "webhook.office.com/webhookb2/"),
    ("zapier-webhook", "hooks.zapier.com/hooks/catch/", "{dig:7}/{an:7}", "hooks.zapier.com/hooks/catch/"),
    ("ifttt-webhook", "maker.ifttt.com/trigger/backup_done/with/key/", "{url:22}", "maker.ifttt.com/trigger/x"),
    ("stripe-key", "", "sk_live_{b62:99}", "sk_live_"),
    ("checkout-key", "", "sk_sbox_{an:26}", "sk_sbox_"),
    ("elevenlabs-key", "", "sk_{hex:48}", "sk_{hex:40}"),
    ("clickup-token", "", "pk_{dig:8}_{un:32}", "pk_12_AB"),
    ("stripe-webhook-secret", "", "whsec_{b62:32}", "whsec_x"),
    ("square-token", "", "sq0csp-{url:43}", "sq0csp-short"),
    ("square-access-token", "", "EAAA{url:60}", "EAAAA"),
    ("shopify-token", "", "shpat_{hex:32}", "shpat_{low:32}"),
    ("shippo-token", "", "shippo_live_{hex:40}", "shippo_live_x"),
    ("flutterwave-key", "", "FLWSECK_TEST-{hex:32}-X", "FLWSECK"),
    ("razorpay-key", "", "rzp_live_{b62:14}", "rzp_live_"),
    ("paddle-key", "", "pdl_live_apikey_{b62:40}", "pdl_live_"),
    ("mercadopago-token", "", "APP_USR-{dig:16}-{dig:6}-{hex:32}-{dig:9}", "APP_USR-1"),
    ("woocommerce-key", "", "ck_{hex:40}", "ck_editor_config"),
    ("braintree-token", "", "access_token$production${an:16}${hex:32}", "access_token$x"),
    ("plaid-token", "", "access-sandbox-{uuid}", "access-sandbox-x"),
    ("aws-access-key-id", "", "AKIA{un:16}", "AKIA{un:12}"),
    ("aws-session-token", "", "IQoJb3JpZ2lu{b64:300}", "IQoJb3JpZ2lu"),
    ("aws-bedrock-key", "", "ABSK{b64:130}", "ABSK"),
    ("aws-bedrock-short-key", "", "bedrock-api-key-{b64:120}", "bedrock-api-key-"),
    ("google-api-key", "", "AIza{url:35}", "AIza"),
    ("google-oauth-access", "", "ya29.{url:120}", "ya29.x"),
    ("google-oauth-refresh", "", "1//0{url:100}", "1//0"),
    ("google-client-secret", "", "GOCSPX-{url:28}", "GOCSPX-"),
    ("google-hmac-key", "", "GOOG1{un:56}", "GOOG1E"),
    ("azure-connection-key", "AccountKey=", "{b64:86}==", "AccountKey=;"),
    ("alibaba-access-key-id", "", "LTAI{b62:20}", "LTAI"),
    ("tencent-secret-id", "", "AKID{b62:32}", "AKID"),
    ("volcengine-access-key", "", "AKLT{url:44}", "AKLT"),
    ("scaleway-access-key", "", "SCW{un:17}", "SCWABCDEFGHIJKLMNOPQ"),
    ("yandex-api-key", "", "AQVN{url:36}", "AQVN"),
    ("yandex-static-key", "", "YC{url:38}", "YC{low:38}"),
    ("yandex-iam-token", "", "t1.{url:40}.{url:86}", "t1.micro"),
    ("digitalocean-token", "", "dop_v1_{hex:64}", "dop_v1_"),
    ("cloudflare-origin-ca-key", "", "v1.0-{hex:24}-{hex:146}", "v1.0-beta"),
    ("akamai-token", "", "akab-{an:16}-{an:16}", "akab-x"),
    ("heroku-key", "", "HRKU-AA{url:58}", "HRKU-"),
    ("fly-token", "", "fo1_{url:43}", "fo1_x"),
    ("render-key", "", "rnd_{b62:32}", "rnd_x"),
    ("netlify-token", "", "nfp_{b62:40}", "nfp_x"),
    ("supabase-token", "", "sbp_{hex:40}", "sbp_x"),
    ("supabase-secret", "", "sb_secret_{url:31}", "sb_secret_"),
    ("neon-key", "", "napi_{an:64}", "napi_x"),
    ("planetscale-token", "", "pscale_tkn_{url:43}", "pscale_tkn_"),
    ("databricks-token", "", "dapi{hex:32}", "dapi_client"),
    ("dbt-cloud-token", "", "dbtc_{url:40}", "dbtc_"),
    ("clickhouse-secret", "", "4b1d{b62:38}", "4b1d"),
    ("tailscale-key", "", "tskey-auth-{b62:12}-{b62:32}", "tskey-auth-"),
    ("openshift-token", "", "sha256~{url:43}", "sha256~x"),
    ("pulumi-token", "", "pul-{hex:40}", "pul-request"),
    ("prefect-key", "", "pnu_{b62:36}", "pnu_x"),
    ("doppler-token", "", "dp.pt.{b62:43}", "dp.pt.x"),
    ("vault-token", "", "hvs.{url:90}", "hvs.x"),
    ("vault-legacy-token", "", "s.{b62:23}1", "s.{low:24}"),
    ("onepassword-secret-key", "", "A3-{un:6}-{un:11}-{un:5}-{un:5}-{un:5}", "A3-PAPER-SIZE"),
    ("onepassword-service-token", "", "ops_eyJ{b64:250}", "ops_eyJ"),
    ("age-secret-key", "", "AGE-SECRET-KEY-1{b32:58}", "AGE-SECRET-KEY-1"),
    ("scalingo-token", "", "tk-us-{url:48}", "tk-us-x"),
    ("infracost-token", "", "ico-{b62:32}", "ico-file"),
    ("frameio-token", "", "fio-u-{url:64}", "fio-u-x"),
    ("defined-networking-token", "", "dnkey-{url:26}-{url:52}", "dnkey-x"),
    ("dynatrace-token", "", "dt0c01.{un:24}.{un:64}", "dt0c01.x"),
    ("anthropic-key", "", "sk-ant-api03-{url:93}AA", "sk-ant-x"),
    ("openai-key", "", "sk-proj-{url:156}", "sk-proj-x"),
    ("openrouter-key", "", "sk-or-v1-{hex:64}", "sk-or-v1-x"),
    ("langfuse-key", "", "sk-lf-{uuid}", "sk-lf-x"),
    ("sk-key", "", "sk-{b62:48}", "sk-learn"),
    ("groq-key", "", "gsk_{b62:52}", "gsk_x"),
    ("xai-key", "", "xai-{b62:80}", "xai-grok"),
    ("replicate-token", "", "r8_{b62:37}", "r8_x"),
    ("pinecone-key", "", "pcsk_{b62:5}_{b62:60}", "pcsk_x"),
    ("nvidia-key", "", "nvapi-{url:64}", "nvapi-x"),
    ("tavily-key", "", "tvly-dev-{b62:32}", "tvly-x"),
    ("langsmith-key", "", "lsv2_pt_{hex:32}_{hex:10}", "lsv2_pt_x"),
    ("perplexity-key", "", "pplx-{b62:48}", "pplx-x"),
    ("huggingface-token", "", "hf_{b62:34}", "hf_hub_download"),
    ("fireworks-key", "", "fw_{b62:23}1", "fw_{low:24}"),
    ("voyage-key", "", "pa-{url:42}1", "pa-{low:40}"),
    ("npm-token", "", "npm_{b62:36}", "npm_config_cache"),
    ("pypi-token", "", "pypi-AgEIcHlwaS5vcmc{url:150}", "pypi-x"),
    ("dockerhub-token", "", "dckr_pat_{url:27}", "dckr_pat_"),
    ("rubygems-token", "", "rubygems_{hex:48}", "rubygems_x"),
    ("clojars-token", "", "CLOJARS_{an:60}", "CLOJARS_REPO"),
    ("nuget-key", "", "oy2{an:43}", "oy2x"),
    ("crates-io-token", "", "cio{b62:31}1", "cio{low:32}"),
    ("artifactory-key", "", "AKCp{b62:69}", "AKCp"),
    ("artifactory-reference-token", "", "cmVmdGtu{b62:56}", "cmVmdGtu"),
    ("readme-key", "", "rdme_{an:70}", "rdme_x"),
    ("sendgrid-key", "", "SG.{url:22}.{url:43}", "SG.foo.bar"),
    ("brevo-key", "", "xkeysib-{hex:64}-{b62:16}", "xkeysib-x"),
    ("mailgun-key", "", "key-{hex:32}", "key-value"),
    ("mailgun-public-key", "", "pubkey-{hex:32}", "pubkey-file"),
    ("mandrill-key", "", "md-{url:21}1", "md-heading-level-one-xy"),
    ("resend-key", "", "re_{b62:8}_{b62:24}", "re_run_x"),
    ("twilio-api-key", "", "SK{hex:32}", "SKU1234"),
    ("twilio-auth-pair", "AC{hex:32}:", "{b62:32}", "AC{hex:32}"),
    ("intercom-token", "", "dG9rOj{b64:54}=", "dG9rO"),
    ("firebase-server-key", "", "AAAA{url:7}:APA91b{url:134}", "AAAA"),
    ("twitter-bearer-token", "", "AAAAAAAAAAAAAAAAAAAAAA{b62:90}", "AAAAAAAA"),
    ("new-relic-key", "", "NRAK-{un:27}", "NRAK-"),
    ("sentry-token", "", "sntryu_{hex:64}", "sntryu_"),
    ("posthog-personal-key", "", "phx_{b62:47}", "phx_"),
    ("honeycomb-key", "", "hcaik_{an:58}", "hcaik_"),
    ("postman-key", "", "PMAK-{hex:24}-{hex:34}", "PMAK-"),
    ("linear-key", "", "lin_api_{b62:40}", "lin_api_"),
    ("notion-token", "", "ntn_{dig:11}{b62:35}", "ntn_"),
    ("notion-legacy-token", "", "secret_{b62:43}", "secret_key"),
    ("figma-token", "", "figd_{url:40}", "figd_"),
    ("airtable-token", "", "pat{b62:14}.{hex:64}", "patch"),
    ("hubspot-token", "", "pat-na1-{uuid}", "pat-na1-x"),
    ("contentful-token", "", "CFPAT-{url:43}", "CFPAT-"),
    ("octopus-key", "", "API-{un:26}", "API-GATEWAY"),
    ("launchdarkly-key", "", "sdk-{uuid}", "sdk-version"),
    ("adobe-secret", "", "p8e-{b62:32}", "p8e-x"),
    ("easypost-key", "", "EZAK{b62:54}", "EZAK"),
    ("duffel-token", "", "duffel_test_{url:43}", "duffel_test_"),
    ("intra42-secret", "", "s-s4t2ud-{hex:64}", "s-s4t2ud-"),
    ("settlemint-token", "", "sm_pat_{b62:16}", "sm_pat_"),
    ("zoho-token", "", "1000.{hex:32}.{hex:32}", "1000.5"),
    ("salesforce-session", "", "00D{b62:15}!{b62:96}", "00D"),
    ("dropbox-token", "", "sl.{url:140}", "sl.no"),
    ("instagram-token", "", "IGQV{url:140}", "IGQV"),
    ("facebook-token", "", "EAAC{b62:120}", "EAAC"),
    ("mapbox-token", "", "pk.eyJ{url:60}.{url:22}", "pk.eyJ"),
    ("grafana-api-key", "", "eyJrIjoi{b62:72}", "eyJrIjoi"),
    ("jwt", "", "eyJ{url:30}.eyJ{url:80}.{url:43}", "eyJ alone"),
    ("jwt-base64", "", "ZXlK{b64:120}", "ZXlK"),
    ("untriggered:aws-secret", "aws_secret_access_key = ", "{b64:40}", "aws_region = {low:40}"),
    ("untriggered:discord-bot", "", "M{url:25}.{url:6}.{url:38}", "M.x.y"),
    ("untriggered:telegram-bot", "bot", "{dig:10}:AA{url:33}", "bot1234567890:A"),
    ("untriggered:facebook-app", "", "{dig:15}|{url:27}", "123|abc"),
    ("untriggered:mailchimp", "", "{hex:32}-us21", "{hex:32}-us"),
    ("untriggered:asana", "", "1/{dig:16}:{hex:32}", "1/2:3"),
    ("untriggered:azure-ad", "", "{b62:3}8Q~{url:34}", "8Q~"),
    ("untriggered:terraform", "", "{an:14}.atlasv1.{url:67}", "x.atlasv1.y"),
    ("untriggered:maxmind", "", "{b62:6}_{b62:29}_mmk", "a_b_mmk"),
];

/// `format` with its placeholders filled from `seed`.
fn expand(format: &str, seed: &mut u64) -> String {
    let b62 = format!("{UPPER}{LOWER}{DIGITS}");
    let mut out = String::new();
    let mut rest = format;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let close = open + rest[open..].find('}').expect("every { has a }");
        let spec = &rest[open + 1..close];
        *seed += 1;
        if spec == "uuid" {
            let parts: Vec<String> = [8, 4, 4, 4, 12]
                .iter()
                .zip(0u64..)
                .map(|(&n, i)| rnd(HEX, n, *seed * 8 + i))
                .collect();
            out.push_str(&parts.join("-"));
        } else {
            let (alphabet, n) = spec.split_once(':').expect("alphabet:length");
            let alphabet = match alphabet {
                "b62" => b62.clone(),
                "url" => format!("{b62}-_"),
                "b64" => format!("{b62}+/"),
                "hex" => HEX.to_owned(),
                "an" => format!("{LOWER}{DIGITS}"),
                "un" => format!("{UPPER}{DIGITS}"),
                "low" => LOWER.to_owned(),
                "dig" => DIGITS.to_owned(),
                "b32" => "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L".to_owned(),
                other => panic!("unknown alphabet {other}"),
            };
            out.push_str(&rnd(&alphabet, n.parse().expect("a length"), *seed));
        }
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    out
}

/// (family, kept text, secret, look-alike) with the placeholders filled.
fn cases() -> Vec<(&'static str, String, String, String)> {
    let mut seed = 0;
    CASES
        .iter()
        .map(|&(name, kept, secret, negative)| {
            (
                name,
                expand(kept, &mut seed),
                expand(secret, &mut seed),
                expand(negative, &mut seed),
            )
        })
        .collect()
}

#[test]
fn every_family_has_a_case() {
    let cases = cases();
    for fam in FAMILIES {
        assert!(
            cases.iter().any(|(name, ..)| *name == fam.name),
            "no case for {}",
            fam.name
        );
    }
    let untriggered = cases
        .iter()
        .filter(|(name, ..)| name.starts_with("untriggered:"))
        .count();
    assert_eq!(untriggered, UNTRIGGERED.len());
}

#[test]
fn each_positive_is_found_whole() {
    for (name, kept, secret, _) in cases() {
        for (before, after) in [("error: ", " end"), ("\"", "\""), ("x=", ""), ("", "\n")] {
            let text = format!("{before}{kept}{secret}{after}");
            let start = before.len() + kept.len();
            assert_eq!(
                find(&text),
                vec![(start, start + secret.len())],
                "{name}: {text}"
            );
        }
    }
}

#[test]
fn each_look_alike_is_left() {
    for (name, _, _, negative) in cases() {
        let text = format!("error: {negative} end");
        assert_eq!(find(&text), vec![], "{name}: {text}");
    }
}

#[test]
fn no_trigger_starts_another() {
    let triggers: Vec<&str> = FAMILIES
        .iter()
        .flat_map(|f| f.triggers.iter().copied())
        .collect();
    for a in &triggers {
        for b in &triggers {
            assert!(a == b || !b.starts_with(a), "{a} starts {b}");
        }
    }
}

#[test]
fn patterns_start_with_a_trigger_and_keep_at_most_a_prefix() {
    for fam in FAMILIES {
        assert!(!fam.triggers.is_empty(), "{}", fam.name);
        let re = Regex::new(fam.pattern).expect("valid pattern");
        assert!(re.captures_len() <= 2, "{}", fam.name);
        assert!(
            re.captures_len() == 1
                || (fam.pattern.starts_with('(') && !fam.pattern.starts_with("(?")),
            "{}",
            fam.name
        );
    }
    for pattern in UNTRIGGERED {
        let re = Regex::new(pattern).expect("valid pattern");
        let start = pattern.trim_start_matches(r"\b");
        assert!(re.captures_len() == 1 || (start.starts_with('(') && !start.starts_with("(?")));
    }
}

#[test]
fn odd_text_never_panics() {
    let noise = rnd("aZ09_-.:|/~é€ghp_xoxb-AKIAsk-eyJ", 20_000, 3);
    for window in [0usize, 1, 2, 3, 5, 7] {
        let start = (window..noise.len())
            .find(|&i| noise.is_char_boundary(i))
            .unwrap();
        let _ = find(&noise[start..]);
    }
}
