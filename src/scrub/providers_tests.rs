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

/// One case per family: (family, text kept in front, secret, look-alike that is no token).
type Case = (&'static str, String, String, String);

fn cases() -> Vec<Case> {
    let b62 = format!("{UPPER}{LOWER}{DIGITS}");
    let b64 = format!("{b62}+/");
    let url = format!("{b62}-_");
    let an = format!("{LOWER}{DIGITS}");
    let un = format!("{UPPER}{DIGITS}");
    let mut seed = 0;
    let mut r = |a: &str, n: usize| {
        seed += 1;
        rnd(a, n, seed)
    };
    let uuid = |r: &mut dyn FnMut(&str, usize) -> String| {
        format!(
            "{}-{}-{}-{}-{}",
            r(HEX, 8),
            r(HEX, 4),
            r(HEX, 4),
            r(HEX, 4),
            r(HEX, 12)
        )
    };
    let none = String::new;
    let mut c: Vec<Case> = vec![
        (
            "github-token",
            none(),
            format!("ghp_{}", r(&b62, 36)),
            format!("ghp_{}", r(&b62, 20)),
        ),
        (
            "github-fine-grained",
            none(),
            format!("github_pat_{}_{}", r(&b62, 22), r(&b62, 59)),
            "github_pat_is_a_prefix".into(),
        ),
        (
            "gitlab-token",
            none(),
            format!("glpat-{}", r(&url, 20)),
            "glpat-short".into(),
        ),
        (
            "grafana-token",
            none(),
            format!("glsa_{}_{}", r(&b62, 32), r(HEX, 8)),
            "glsa_x".into(),
        ),
        (
            "gitlab-runner-registration",
            none(),
            format!("GR1348941{}", r(&url, 20)),
            "GR1348941 build".into(),
        ),
        (
            "bitbucket-app-password",
            none(),
            format!("ATBB{}", r(&b62, 32)),
            "ATBB-x".into(),
        ),
        (
            "bitbucket-dc-token",
            none(),
            format!("BBDC-{}", r(&b64, 44)),
            "BBDC-1".into(),
        ),
        (
            "circleci-token",
            none(),
            format!("CCIPAT_{}_{}", r(&b62, 22), r(HEX, 40)),
            "CCIPAT_x".into(),
        ),
        (
            "buildkite-token",
            none(),
            format!("bkua_{}", r(HEX, 40)),
            format!("bkua_{}", r(LOWER, 40)),
        ),
        (
            "sonarqube-token",
            none(),
            format!("squ_{}", r(HEX, 40)),
            "squ_notes".into(),
        ),
        (
            "sourcegraph-token",
            none(),
            format!("sgp_{}_{}", r(HEX, 16), r(HEX, 40)),
            "sgp_local".into(),
        ),
        (
            "atlassian-token",
            none(),
            format!("ATATT3{}", r(&url, 180)),
            "ATATT3x".into(),
        ),
        (
            "atlassian-cookie-token",
            none(),
            format!("ATCTT3{}", r(&url, 180)),
            "ATCTT3x".into(),
        ),
        (
            "harness-token",
            none(),
            format!("pat.{}.{}.{}", r(&url, 22), r(&b62, 24), r(&b62, 20)),
            "pat.example.com".into(),
        ),
        (
            "slack-token",
            none(),
            format!("xoxb-{}-{}", r(DIGITS, 12), r(&b62, 24)),
            "xoxb-".into(),
        ),
        (
            "slack-app-token",
            none(),
            format!("xapp-1-A{}-{}", r(&un, 10), r(&an, 64)),
            "xapp-x".into(),
        ),
        (
            "slack-webhook",
            "hooks.slack.com/services/".into(),
            format!("T{}/B{}/{}", r(&un, 8), r(&un, 10), r(&b62, 24)),
            "hooks.slack.com/services/".into(),
        ),
        (
            "discord-webhook",
            "discord.com/api/webhooks/123456789012345678/".into(),
            r(&url, 68),
            "discord.com/api/webhooks/".into(),
        ),
        (
            "discord-mfa-token",
            none(),
            format!("mfa.{}", r(&url, 84)),
            "mfa.enabled".into(),
        ),
        (
            "teams-webhook",
            "webhook.office.com/webhookb2/".into(),
            format!(
                "{}@{}/IncomingWebhook/{}/{}",
                uuid(&mut r),
                uuid(&mut r),
                r(&an, 32),
                uuid(&mut r)
            ),
            "webhook.office.com/webhookb2/".into(),
        ),
        (
            "zapier-webhook",
            "hooks.zapier.com/hooks/catch/".into(),
            format!("{}/{}", r(DIGITS, 7), r(&an, 7)),
            "hooks.zapier.com/hooks/catch/".into(),
        ),
        (
            "ifttt-webhook",
            "maker.ifttt.com/trigger/backup_done/with/key/".into(),
            r(&url, 22),
            "maker.ifttt.com/trigger/x".into(),
        ),
        (
            "stripe-key",
            none(),
            format!("sk_live_{}", r(&b62, 99)),
            "sk_live_".into(),
        ),
        (
            "checkout-key",
            none(),
            format!("sk_sbox_{}", r(&an, 26)),
            "sk_sbox_".into(),
        ),
        (
            "elevenlabs-key",
            none(),
            format!("sk_{}", r(HEX, 48)),
            format!("sk_{}", r(HEX, 40)),
        ),
        (
            "clickup-token",
            none(),
            format!("pk_{}_{}", r(DIGITS, 8), r(&un, 32)),
            "pk_12_AB".into(),
        ),
        (
            "stripe-webhook-secret",
            none(),
            format!("whsec_{}", r(&b62, 32)),
            "whsec_x".into(),
        ),
        (
            "square-token",
            none(),
            format!("sq0csp-{}", r(&url, 43)),
            "sq0csp-short".into(),
        ),
        (
            "square-access-token",
            none(),
            format!("EAAA{}", r(&url, 60)),
            "EAAAA".into(),
        ),
        (
            "shopify-token",
            none(),
            format!("shpat_{}", r(HEX, 32)),
            format!("shpat_{}", r(LOWER, 32)),
        ),
        (
            "shippo-token",
            none(),
            format!("shippo_live_{}", r(HEX, 40)),
            "shippo_live_x".into(),
        ),
        (
            "flutterwave-key",
            none(),
            format!("FLWSECK_TEST-{}-X", r(HEX, 32)),
            "FLWSECK".into(),
        ),
        (
            "razorpay-key",
            none(),
            format!("rzp_live_{}", r(&b62, 14)),
            "rzp_live_".into(),
        ),
        (
            "paddle-key",
            none(),
            format!("pdl_live_apikey_{}", r(&b62, 40)),
            "pdl_live_".into(),
        ),
        (
            "mercadopago-token",
            none(),
            format!(
                "APP_USR-{}-{}-{}-{}",
                r(DIGITS, 16),
                r(DIGITS, 6),
                r(HEX, 32),
                r(DIGITS, 9)
            ),
            "APP_USR-1".into(),
        ),
        (
            "woocommerce-key",
            none(),
            format!("ck_{}", r(HEX, 40)),
            "ck_editor_config".into(),
        ),
        (
            "braintree-token",
            none(),
            format!("access_token$production${}${}", r(&an, 16), r(HEX, 32)),
            "access_token$x".into(),
        ),
        (
            "plaid-token",
            none(),
            format!("access-sandbox-{}", uuid(&mut r)),
            "access-sandbox-x".into(),
        ),
        (
            "aws-access-key-id",
            none(),
            format!("AKIA{}", r(&un, 16)),
            format!("AKIA{}", r(&un, 12)),
        ),
        (
            "aws-session-token",
            none(),
            format!("IQoJb3JpZ2lu{}", r(&b64, 300)),
            "IQoJb3JpZ2lu".into(),
        ),
        (
            "aws-bedrock-key",
            none(),
            format!("ABSK{}", r(&b64, 130)),
            "ABSK".into(),
        ),
        (
            "aws-bedrock-short-key",
            none(),
            format!("bedrock-api-key-{}", r(&b64, 120)),
            "bedrock-api-key-".into(),
        ),
        (
            "google-api-key",
            none(),
            format!("AIza{}", r(&url, 35)),
            "AIza".into(),
        ),
        (
            "google-oauth-access",
            none(),
            format!("ya29.{}", r(&url, 120)),
            "ya29.x".into(),
        ),
        (
            "google-oauth-refresh",
            none(),
            format!("1//0{}", r(&url, 100)),
            "1//0".into(),
        ),
        (
            "google-client-secret",
            none(),
            format!("GOCSPX-{}", r(&url, 28)),
            "GOCSPX-".into(),
        ),
        (
            "google-hmac-key",
            none(),
            format!("GOOG1{}", r(&un, 56)),
            "GOOG1E".into(),
        ),
        (
            "azure-connection-key",
            "AccountKey=".into(),
            format!("{}==", r(&b64, 86)),
            "AccountKey=;".into(),
        ),
        (
            "alibaba-access-key-id",
            none(),
            format!("LTAI{}", r(&b62, 20)),
            "LTAI".into(),
        ),
        (
            "tencent-secret-id",
            none(),
            format!("AKID{}", r(&b62, 32)),
            "AKID".into(),
        ),
        (
            "volcengine-access-key",
            none(),
            format!("AKLT{}", r(&url, 44)),
            "AKLT".into(),
        ),
        (
            "scaleway-access-key",
            none(),
            format!("SCW{}", r(&un, 17)),
            "SCWABCDEFGHIJKLMNOPQ".into(),
        ),
        (
            "yandex-api-key",
            none(),
            format!("AQVN{}", r(&url, 36)),
            "AQVN".into(),
        ),
        (
            "yandex-static-key",
            none(),
            format!("YC{}", r(&url, 38)),
            format!("YC{}", r(LOWER, 38)),
        ),
        (
            "yandex-iam-token",
            none(),
            format!("t1.{}.{}", r(&url, 40), r(&url, 86)),
            "t1.micro".into(),
        ),
        (
            "digitalocean-token",
            none(),
            format!("dop_v1_{}", r(HEX, 64)),
            "dop_v1_".into(),
        ),
        (
            "cloudflare-origin-ca-key",
            none(),
            format!("v1.0-{}-{}", r(HEX, 24), r(HEX, 146)),
            "v1.0-beta".into(),
        ),
        (
            "akamai-token",
            none(),
            format!("akab-{}-{}", r(&an, 16), r(&an, 16)),
            "akab-x".into(),
        ),
        (
            "heroku-key",
            none(),
            format!("HRKU-AA{}", r(&url, 58)),
            "HRKU-".into(),
        ),
        (
            "fly-token",
            none(),
            format!("fo1_{}", r(&url, 43)),
            "fo1_x".into(),
        ),
        (
            "render-key",
            none(),
            format!("rnd_{}", r(&b62, 32)),
            "rnd_x".into(),
        ),
        (
            "netlify-token",
            none(),
            format!("nfp_{}", r(&b62, 40)),
            "nfp_x".into(),
        ),
        (
            "supabase-token",
            none(),
            format!("sbp_{}", r(HEX, 40)),
            "sbp_x".into(),
        ),
        (
            "supabase-secret",
            none(),
            format!("sb_secret_{}", r(&url, 31)),
            "sb_secret_".into(),
        ),
        (
            "neon-key",
            none(),
            format!("napi_{}", r(&an, 64)),
            "napi_x".into(),
        ),
        (
            "planetscale-token",
            none(),
            format!("pscale_tkn_{}", r(&url, 43)),
            "pscale_tkn_".into(),
        ),
        (
            "databricks-token",
            none(),
            format!("dapi{}", r(HEX, 32)),
            "dapi_client".into(),
        ),
        (
            "dbt-cloud-token",
            none(),
            format!("dbtc_{}", r(&url, 40)),
            "dbtc_".into(),
        ),
        (
            "clickhouse-secret",
            none(),
            format!("4b1d{}", r(&b62, 38)),
            "4b1d".into(),
        ),
        (
            "tailscale-key",
            none(),
            format!("tskey-auth-{}-{}", r(&b62, 12), r(&b62, 32)),
            "tskey-auth-".into(),
        ),
        (
            "openshift-token",
            none(),
            format!("sha256~{}", r(&url, 43)),
            "sha256~x".into(),
        ),
        (
            "pulumi-token",
            none(),
            format!("pul-{}", r(HEX, 40)),
            "pul-request".into(),
        ),
        (
            "prefect-key",
            none(),
            format!("pnu_{}", r(&b62, 36)),
            "pnu_x".into(),
        ),
        (
            "doppler-token",
            none(),
            format!("dp.pt.{}", r(&b62, 43)),
            "dp.pt.x".into(),
        ),
        (
            "vault-token",
            none(),
            format!("hvs.{}", r(&url, 90)),
            "hvs.x".into(),
        ),
        (
            "vault-legacy-token",
            none(),
            format!("s.{}1", r(&b62, 23)),
            format!("s.{}", r(LOWER, 24)),
        ),
        (
            "onepassword-secret-key",
            none(),
            format!(
                "A3-{}-{}-{}-{}-{}",
                r(&un, 6),
                r(&un, 11),
                r(&un, 5),
                r(&un, 5),
                r(&un, 5)
            ),
            "A3-PAPER-SIZE".into(),
        ),
        (
            "onepassword-service-token",
            none(),
            format!("ops_eyJ{}", r(&b64, 250)),
            "ops_eyJ".into(),
        ),
        (
            "age-secret-key",
            none(),
            format!(
                "AGE-SECRET-KEY-1{}",
                r("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58)
            ),
            "AGE-SECRET-KEY-1".into(),
        ),
        (
            "scalingo-token",
            none(),
            format!("tk-us-{}", r(&url, 48)),
            "tk-us-x".into(),
        ),
        (
            "infracost-token",
            none(),
            format!("ico-{}", r(&b62, 32)),
            "ico-file".into(),
        ),
        (
            "frameio-token",
            none(),
            format!("fio-u-{}", r(&url, 64)),
            "fio-u-x".into(),
        ),
        (
            "defined-networking-token",
            none(),
            format!("dnkey-{}-{}", r(&url, 26), r(&url, 52)),
            "dnkey-x".into(),
        ),
        (
            "dynatrace-token",
            none(),
            format!("dt0c01.{}.{}", r(&un, 24), r(&un, 64)),
            "dt0c01.x".into(),
        ),
        (
            "anthropic-key",
            none(),
            format!("sk-ant-api03-{}AA", r(&url, 93)),
            "sk-ant-x".into(),
        ),
        (
            "openai-key",
            none(),
            format!("sk-proj-{}", r(&url, 156)),
            "sk-proj-x".into(),
        ),
        (
            "openrouter-key",
            none(),
            format!("sk-or-v1-{}", r(HEX, 64)),
            "sk-or-v1-x".into(),
        ),
        (
            "langfuse-key",
            none(),
            format!("sk-lf-{}", uuid(&mut r)),
            "sk-lf-x".into(),
        ),
        (
            "sk-key",
            none(),
            format!("sk-{}", r(&b62, 48)),
            "sk-learn".into(),
        ),
        (
            "groq-key",
            none(),
            format!("gsk_{}", r(&b62, 52)),
            "gsk_x".into(),
        ),
        (
            "xai-key",
            none(),
            format!("xai-{}", r(&b62, 80)),
            "xai-grok".into(),
        ),
        (
            "replicate-token",
            none(),
            format!("r8_{}", r(&b62, 37)),
            "r8_x".into(),
        ),
        (
            "pinecone-key",
            none(),
            format!("pcsk_{}_{}", r(&b62, 5), r(&b62, 60)),
            "pcsk_x".into(),
        ),
        (
            "nvidia-key",
            none(),
            format!("nvapi-{}", r(&url, 64)),
            "nvapi-x".into(),
        ),
        (
            "tavily-key",
            none(),
            format!("tvly-dev-{}", r(&b62, 32)),
            "tvly-x".into(),
        ),
        (
            "langsmith-key",
            none(),
            format!("lsv2_pt_{}_{}", r(HEX, 32), r(HEX, 10)),
            "lsv2_pt_x".into(),
        ),
        (
            "perplexity-key",
            none(),
            format!("pplx-{}", r(&b62, 48)),
            "pplx-x".into(),
        ),
        (
            "huggingface-token",
            none(),
            format!("hf_{}", r(&b62, 34)),
            "hf_hub_download".into(),
        ),
        (
            "fireworks-key",
            none(),
            format!("fw_{}1", r(&b62, 23)),
            format!("fw_{}", r(LOWER, 24)),
        ),
        (
            "voyage-key",
            none(),
            format!("pa-{}1", r(&url, 42)),
            format!("pa-{}", r(LOWER, 40)),
        ),
        (
            "npm-token",
            none(),
            format!("npm_{}", r(&b62, 36)),
            "npm_config_cache".into(),
        ),
        (
            "pypi-token",
            none(),
            format!("pypi-AgEIcHlwaS5vcmc{}", r(&url, 150)),
            "pypi-x".into(),
        ),
        (
            "dockerhub-token",
            none(),
            format!("dckr_pat_{}", r(&url, 27)),
            "dckr_pat_".into(),
        ),
        (
            "rubygems-token",
            none(),
            format!("rubygems_{}", r(HEX, 48)),
            "rubygems_x".into(),
        ),
        (
            "clojars-token",
            none(),
            format!("CLOJARS_{}", r(&an, 60)),
            "CLOJARS_REPO".into(),
        ),
        (
            "nuget-key",
            none(),
            format!("oy2{}", r(&an, 43)),
            "oy2x".into(),
        ),
        (
            "crates-io-token",
            none(),
            format!("cio{}1", r(&b62, 31)),
            format!("cio{}", r(LOWER, 32)),
        ),
        (
            "artifactory-key",
            none(),
            format!("AKCp{}", r(&b62, 69)),
            "AKCp".into(),
        ),
        (
            "artifactory-reference-token",
            none(),
            format!("cmVmdGtu{}", r(&b62, 56)),
            "cmVmdGtu".into(),
        ),
        (
            "readme-key",
            none(),
            format!("rdme_{}", r(&an, 70)),
            "rdme_x".into(),
        ),
        (
            "sendgrid-key",
            none(),
            format!("SG.{}.{}", r(&url, 22), r(&url, 43)),
            "SG.foo.bar".into(),
        ),
        (
            "brevo-key",
            none(),
            format!("xkeysib-{}-{}", r(HEX, 64), r(&b62, 16)),
            "xkeysib-x".into(),
        ),
        (
            "mailgun-key",
            none(),
            format!("key-{}", r(HEX, 32)),
            "key-value".into(),
        ),
        (
            "mailgun-public-key",
            none(),
            format!("pubkey-{}", r(HEX, 32)),
            "pubkey-file".into(),
        ),
        (
            "mandrill-key",
            none(),
            format!("md-{}1", r(&url, 21)),
            "md-heading-level-one-xy".into(),
        ),
        (
            "resend-key",
            none(),
            format!("re_{}_{}", r(&b62, 8), r(&b62, 24)),
            "re_run_x".into(),
        ),
        (
            "twilio-api-key",
            none(),
            format!("SK{}", r(HEX, 32)),
            "SKU1234".into(),
        ),
        (
            "twilio-auth-pair",
            format!("AC{}:", r(HEX, 32)),
            r(&b62, 32),
            format!("AC{}", r(HEX, 32)),
        ),
        (
            "intercom-token",
            none(),
            format!("dG9rOj{}=", r(&b64, 54)),
            "dG9rO".into(),
        ),
        (
            "firebase-server-key",
            none(),
            format!("AAAA{}:APA91b{}", r(&url, 7), r(&url, 134)),
            "AAAA".into(),
        ),
        (
            "twitter-bearer-token",
            none(),
            format!("{}{}", "A".repeat(22), r(&b62, 90)),
            "AAAAAAAA".into(),
        ),
        (
            "new-relic-key",
            none(),
            format!("NRAK-{}", r(&un, 27)),
            "NRAK-".into(),
        ),
        (
            "sentry-token",
            none(),
            format!("sntryu_{}", r(HEX, 64)),
            "sntryu_".into(),
        ),
        (
            "posthog-personal-key",
            none(),
            format!("phx_{}", r(&b62, 47)),
            "phx_".into(),
        ),
        (
            "honeycomb-key",
            none(),
            format!("hcaik_{}", r(&an, 58)),
            "hcaik_".into(),
        ),
        (
            "postman-key",
            none(),
            format!("PMAK-{}-{}", r(HEX, 24), r(HEX, 34)),
            "PMAK-".into(),
        ),
        (
            "linear-key",
            none(),
            format!("lin_api_{}", r(&b62, 40)),
            "lin_api_".into(),
        ),
        (
            "notion-token",
            none(),
            format!("ntn_{}{}", r(DIGITS, 11), r(&b62, 35)),
            "ntn_".into(),
        ),
        (
            "notion-legacy-token",
            none(),
            format!("secret_{}", r(&b62, 43)),
            "secret_key".into(),
        ),
        (
            "figma-token",
            none(),
            format!("figd_{}", r(&url, 40)),
            "figd_".into(),
        ),
        (
            "airtable-token",
            none(),
            format!("pat{}.{}", r(&b62, 14), r(HEX, 64)),
            "patch".into(),
        ),
        (
            "hubspot-token",
            none(),
            format!("pat-na1-{}", uuid(&mut r)),
            "pat-na1-x".into(),
        ),
        (
            "contentful-token",
            none(),
            format!("CFPAT-{}", r(&url, 43)),
            "CFPAT-".into(),
        ),
        (
            "octopus-key",
            none(),
            format!("API-{}", r(&un, 26)),
            "API-GATEWAY".into(),
        ),
        (
            "launchdarkly-key",
            none(),
            format!("sdk-{}", uuid(&mut r)),
            "sdk-version".into(),
        ),
        (
            "adobe-secret",
            none(),
            format!("p8e-{}", r(&b62, 32)),
            "p8e-x".into(),
        ),
        (
            "easypost-key",
            none(),
            format!("EZAK{}", r(&b62, 54)),
            "EZAK".into(),
        ),
        (
            "duffel-token",
            none(),
            format!("duffel_test_{}", r(&url, 43)),
            "duffel_test_".into(),
        ),
        (
            "intra42-secret",
            none(),
            format!("s-s4t2ud-{}", r(HEX, 64)),
            "s-s4t2ud-".into(),
        ),
        (
            "settlemint-token",
            none(),
            format!("sm_pat_{}", r(&b62, 16)),
            "sm_pat_".into(),
        ),
        (
            "zoho-token",
            none(),
            format!("1000.{}.{}", r(HEX, 32), r(HEX, 32)),
            "1000.5".into(),
        ),
        (
            "salesforce-session",
            none(),
            format!("00D{}!{}", r(&b62, 15), r(&b62, 96)),
            "00D".into(),
        ),
        (
            "dropbox-token",
            none(),
            format!("sl.{}", r(&url, 140)),
            "sl.no".into(),
        ),
        (
            "instagram-token",
            none(),
            format!("IGQV{}", r(&url, 140)),
            "IGQV".into(),
        ),
        (
            "facebook-token",
            none(),
            format!("EAAC{}", r(&b62, 120)),
            "EAAC".into(),
        ),
        (
            "mapbox-token",
            none(),
            format!("pk.eyJ{}.{}", r(&url, 60), r(&url, 22)),
            "pk.eyJ".into(),
        ),
        (
            "grafana-api-key",
            none(),
            format!("eyJrIjoi{}", r(&b62, 72)),
            "eyJrIjoi".into(),
        ),
        (
            "jwt",
            none(),
            format!("eyJ{}.eyJ{}.{}", r(&url, 30), r(&url, 80), r(&url, 43)),
            "eyJ alone".into(),
        ),
        (
            "jwt-base64",
            none(),
            format!("ZXlK{}", r(&b64, 120)),
            "ZXlK".into(),
        ),
    ];
    // Shapes without a trigger.
    c.extend([
        (
            "untriggered:aws-secret",
            "aws_secret_access_key = ".into(),
            r(&b64, 40),
            format!("aws_region = {}", r(LOWER, 40)),
        ),
        (
            "untriggered:discord-bot",
            none(),
            format!("M{}.{}.{}", r(&url, 25), r(&url, 6), r(&url, 38)),
            "M.x.y".into(),
        ),
        (
            "untriggered:telegram-bot",
            "bot".into(),
            format!("{}:AA{}", r(DIGITS, 10), r(&url, 33)),
            "bot1234567890:A".into(),
        ),
        (
            "untriggered:facebook-app",
            none(),
            format!("{}|{}", r(DIGITS, 15), r(&url, 27)),
            "123|abc".into(),
        ),
        (
            "untriggered:mailchimp",
            none(),
            format!("{}-us21", r(HEX, 32)),
            format!("{}-us", r(HEX, 32)),
        ),
        (
            "untriggered:asana",
            none(),
            format!("1/{}:{}", r(DIGITS, 16), r(HEX, 32)),
            "1/2:3".into(),
        ),
        (
            "untriggered:azure-ad",
            none(),
            format!("{}8Q~{}", r(&b62, 3), r(&url, 34)),
            "8Q~".into(),
        ),
        (
            "untriggered:terraform",
            none(),
            format!("{}.atlasv1.{}", r(&an, 14), r(&url, 67)),
            "x.atlasv1.y".into(),
        ),
        (
            "untriggered:maxmind",
            none(),
            format!("{}_{}_mmk", r(&b62, 6), r(&b62, 29)),
            "a_b_mmk".into(),
        ),
    ]);
    c
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
