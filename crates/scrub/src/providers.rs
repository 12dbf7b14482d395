//! The table of provider token formats, and the search that finds them in text.
//!
//! Each [`Family`] is one provider's documented token shape, written from the providers'
//! documentation and the rule sets the public secret scanners publish (gitleaks,
//! trufflehog, detect-secrets). A family starts with a literal *trigger* (`ghp`, `xoxb-`,
//! `AKIA`, …): one regex made of nothing but the triggers finds every place where a token
//! may start, and only there is a family's own pattern tried, anchored. A family's pattern
//! is compiled the first time its trigger is seen, so a text without tokens compiles only
//! the trigger regex, and the cost stays one linear scan however long the table grows.
//!
//! A few shapes have no literal start (a Telegram bot token starts with digits, an AWS
//! secret key is only known by the name in front of it); they are [`UNTRIGGERED`] and run
//! as one regex over the whole text.
//!
//! A pattern may start with one capture group: text that is kept in front of the marker (a
//! URL path, `AccountKey=`). Families marked [`Check::Mixed`] have a weak shape (a short
//! common prefix such as `md-`): the token also needs a letter and a digit after the
//! trigger, so that `md-heading-level-one-title-x` stays.

use std::collections::HashMap;
use std::sync::{LazyLock, OnceLock};

use regex::Regex;

/// An extra test on a family's match.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Check {
    /// The pattern alone decides.
    Shape,
    /// After the trigger, the token holds at least one ASCII letter and one digit.
    Mixed,
}

/// One provider token format.
pub struct Family {
    /// Provider and kind, for tests and reports: `github-classic`.
    #[cfg_attr(not(test), allow(dead_code))]
    pub name: &'static str,
    /// Literal starts of the token; the pattern must match only text starting with one.
    pub triggers: &'static [&'static str],
    /// The token's shape, tried anchored where a trigger starts (`\b` is ASCII).
    pub pattern: &'static str,
    pub check: Check,
}

const fn f(name: &'static str, triggers: &'static [&'static str], pattern: &'static str) -> Family {
    Family {
        name,
        triggers,
        pattern,
        check: Check::Shape,
    }
}

const fn weak(
    name: &'static str,
    triggers: &'static [&'static str],
    pattern: &'static str,
) -> Family {
    Family {
        name,
        triggers,
        pattern,
        check: Check::Mixed,
    }
}

/// A UUID in either case, for the patterns below.
macro_rules! uuid {
    () => {
        "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
    };
}

/// Every provider family with a literal start. Within one trigger, families are tried in
/// order, so the more specific come first.
#[rustfmt::skip]
pub const FAMILIES: &[Family] = &[
    // Source hosting and CI.
    f("github-token", &["gh"], r"gh[pousr]_[A-Za-z0-9]{36,}"),
    f("github-fine-grained", &["github_pat_"], r"github_pat_[A-Za-z0-9_]{82,}"),
    f("gitlab-token", &["gl"], r"gl(?:pat|dt|rtr|rt|ptt|cbt|imt|agent|soat|ffct|oas|ft)-[A-Za-z0-9_\-]{20,}(?:\.[A-Za-z0-9_\-]+)*"),
    f("grafana-token", &["gl"], r"gl(?:sa|c)_[A-Za-z0-9_+/]{32,}={0,2}"),
    f("gitlab-runner-registration", &["GR1348941"], r"GR1348941[A-Za-z0-9_\-]{20,}"),
    f("bitbucket-app-password", &["ATBB"], r"ATBB[A-Za-z0-9_=.\-]{24,}"),
    f("bitbucket-dc-token", &["BBDC-"], r"BBDC-[A-Za-z0-9+/_=\-]{30,}"),
    f("circleci-token", &["CCIPAT_", "CCIPRJ_"], r"CCIP(?:AT|RJ)_[A-Za-z0-9_]{20,}"),
    f("buildkite-token", &["bkua_"], r"bkua_[a-f0-9]{40}"),
    f("sonarqube-token", &["squ_", "sqp_", "sqa_"], r"sq[upa]_[a-f0-9]{40}"),
    f("sourcegraph-token", &["sgp_"], r"sgp_(?:[a-fA-F0-9]{16}_|local_)?[a-fA-F0-9]{40}"),
    f("atlassian-token", &["ATATT3"], r"ATATT3[A-Za-z0-9_\-=]{50,}"),
    f("atlassian-cookie-token", &["ATCTT3"], r"ATCTT3[A-Za-z0-9_\-=]{50,}"),
    f("harness-token", &["pat", "sat."], r"[ps]at\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}"),
    // Chat and webhooks.
    f("slack-token", &["xox"], r"xox(?:[abposr]|e(?:\.xox[bp])?)-[A-Za-z0-9\-]{10,}"),
    f("slack-app-token", &["xapp-"], r"xapp-[0-9]-[A-Za-z0-9\-]{10,}"),
    f("slack-webhook", &["hooks.slack.com/"], r"(hooks\.slack\.com/(?:services|workflows|triggers)/)[A-Za-z0-9_/\-]{20,}"),
    f("discord-webhook", &["discord.com/", "discordapp.com/"], r"(discord(?:app)?\.com/api/webhooks/[0-9]+/)[A-Za-z0-9_\-]{20,}"),
    f("discord-mfa-token", &["mfa."], r"mfa\.[A-Za-z0-9_\-]{80,}"),
    f("teams-webhook", &["webhook.office.com/"], r"(webhook\.office\.com/webhookb2/)[A-Za-z0-9@/_\-]{40,}"),
    f("zapier-webhook", &["hooks.zapier.com/"], r"(hooks\.zapier\.com/hooks/catch/)[0-9]+/[A-Za-z0-9]+"),
    f("ifttt-webhook", &["maker.ifttt.com/"], r"(maker\.ifttt\.com/(?:trigger/[A-Za-z0-9_\-.]+/(?:json/)?)?with/key/)[A-Za-z0-9_\-]{16,}"),
    // Payments and commerce.
    f("stripe-key", &["sk_", "rk_", "pk_"], r"[srp]k_(?:live|test|prod)_[A-Za-z0-9]{16,}"),
    f("checkout-key", &["sk_"], r"sk_sbox_[A-Za-z0-9_\-]{20,}"),
    f("elevenlabs-key", &["sk_"], r"sk_[a-f0-9]{48}\b"),
    f("clickup-token", &["pk_"], r"pk_[0-9]{4,}_[A-Z0-9]{32}\b"),
    f("stripe-webhook-secret", &["whsec_"], r"whsec_[A-Za-z0-9+/=]{24,}"),
    f("square-token", &["sq0atp-", "sq0csp-", "sq0idp-"], r"sq0(?:atp|csp|idp)-[A-Za-z0-9_\-]{22,}"),
    f("square-access-token", &["EAAA"], r"EAAA[A-Za-z0-9_\-]{60,}"),
    f("shopify-token", &["shpat_", "shpss_", "shpca_", "shppa_"], r"shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}"),
    f("shippo-token", &["shippo_"], r"shippo_(?:live|test)_[a-fA-F0-9]{40}"),
    f("flutterwave-key", &["FLWSECK", "FLWPUBK"], r"FLW(?:SECK|PUBK)(?:_TEST)?-[a-zA-Z0-9]{12,}(?:-X)?"),
    f("razorpay-key", &["rzp_"], r"rzp_(?:live|test)_[A-Za-z0-9]{14,}"),
    f("paddle-key", &["pdl_"], r"pdl_(?:live|sdbx)_apikey_[A-Za-z0-9_]{20,}"),
    f("mercadopago-token", &["APP_USR-"], r"APP_USR-[0-9]{10,}-[0-9]{6}-[a-f0-9]{32}-[0-9]{6,}"),
    f("woocommerce-key", &["ck_", "cs_"], r"c[ks]_[a-f0-9]{40}\b"),
    f("braintree-token", &["access_token$"], r"access_token\$(?:production|sandbox)\$[a-z0-9]{16}\$[a-f0-9]{32}"),
    f("plaid-token", &["access-"], concat!(r"access-(?:sandbox|development|production)-", uuid!())),
    // Cloud providers.
    f("aws-access-key-id", &["AKIA", "ASIA", "AGPA", "AIDA", "AROA", "ANPA", "ANVA", "AIPA", "ABIA", "A3T",], r"(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA|ABIA|A3T[A-Z0-9])[A-Z0-9]{16}\b"),
    f("aws-access-key-id", &["AC"], r"ACCA[A-Z0-9]{16}\b"),
    f("aws-session-token", &["FwoGZXIvYXdz", "IQoJb3JpZ2lu"], r"(?:FwoGZXIvYXdz|IQoJb3JpZ2lu)[A-Za-z0-9/+]{100,}={0,2}"),
    f("aws-bedrock-key", &["ABSK"], r"ABSK[A-Za-z0-9+/]{100,}={0,2}"),
    f("aws-bedrock-short-key", &["bedrock-api-key-"], r"bedrock-api-key-[A-Za-z0-9+/=_\-]{40,}"),
    f("google-api-key", &["AIza"], r"AIza[A-Za-z0-9_\-]{35,}"),
    f("google-oauth-access", &["ya29."], r"ya29\.[A-Za-z0-9_\-.]{20,}"),
    f("google-oauth-refresh", &["1//0"], r"1//0[A-Za-z0-9_\-]{40,}"),
    f("google-client-secret", &["GOCSPX-"], r"GOCSPX-[A-Za-z0-9_\-]{20,}"),
    f("google-hmac-key", &["GOOG1"], r"GOOG1[A-Z0-9]{50,}"),
    f("azure-connection-key", &["AccountKey=", "SharedAccessKey="], r"((?:AccountKey|SharedAccessKey)=)[A-Za-z0-9+/]{20,}={0,2}"),
    f("alibaba-access-key-id", &["LTAI"], r"LTAI[A-Za-z0-9]{12,20}\b"),
    f("tencent-secret-id", &["AKID"], r"AKID[A-Za-z0-9]{32}\b"),
    f("volcengine-access-key", &["AKLT"], r"AKLT[A-Za-z0-9_\-]{40,}"),
    weak("scaleway-access-key", &["SCW"], r"SCW[A-Z0-9]{17}\b"),
    f("yandex-api-key", &["AQVN"], r"AQVN[A-Za-z0-9_\-]{35,}"),
    weak("yandex-static-key", &["YC"], r"YC[A-Za-z0-9_\-]{38,}"),
    f("yandex-iam-token", &["t1."], r"t1\.[A-Za-z0-9_\-]+=*\.[A-Za-z0-9_\-]{80,}=*"),
    f("digitalocean-token", &["dop_v1_", "doo_v1_", "dor_v1_"], r"do[opr]_v1_[a-f0-9]{64}"),
    f("cloudflare-origin-ca-key", &["v1.0-"], r"v1\.0-[a-f0-9]{24}-[a-f0-9]{146}"),
    f("akamai-token", &["akab-"], r"akab-[a-z0-9]{16}-[a-z0-9]{16}"),
    f("heroku-key", &["HRKU-"], r"HRKU-[A-Za-z0-9_\-]{20,}"),
    f("fly-token", &["fo1_", "fm1a_", "fm1r_", "fm2_"], r"(?:fo1_[A-Za-z0-9_\-]{43}|fm(?:1[ar]|2)_[A-Za-z0-9+/]{100,}={0,3})"),
    f("render-key", &["rnd_"], r"rnd_[A-Za-z0-9]{28,}"),
    f("netlify-token", &["nfp_"], r"nfp_[A-Za-z0-9]{36,}"),
    f("supabase-token", &["sbp_"], r"sbp_(?:oauth_)?[a-f0-9]{40}"),
    f("supabase-secret", &["sb_secret_"], r"sb_secret_[A-Za-z0-9_\-]{20,}"),
    f("neon-key", &["napi_"], r"napi_[a-z0-9]{60,}"),
    f("planetscale-token", &["pscale_"], r"pscale_(?:tkn|oauth|pw)_[A-Za-z0-9_=.\-]{32,}"),
    f("databricks-token", &["dapi"], r"dapi[a-f0-9]{32}(?:-[0-9])?\b"),
    f("dbt-cloud-token", &["dbtc_", "dbtu_"], r"dbt[cu]_[A-Za-z0-9_\-]{30,}"),
    f("clickhouse-secret", &["4b1d"], r"4b1d[A-Za-z0-9]{38}\b"),
    f("tailscale-key", &["tskey-"], r"tskey-(?:api|auth|client|scim|webhook)-[A-Za-z0-9]+-[A-Za-z0-9]{16,}"),
    f("openshift-token", &["sha256~"], r"sha256~[A-Za-z0-9_\-]{43}"),
    f("pulumi-token", &["pul-"], r"pul-[a-f0-9]{40}"),
    f("prefect-key", &["pnu_"], r"pnu_[A-Za-z0-9]{36}"),
    f("doppler-token", &["dp."], r"dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9_\-.]{20,}"),
    f("vault-token", &["hvs.", "hvb.", "hvr."], r"hv[sbr]\.[A-Za-z0-9_\-]{24,}"),
    weak("vault-legacy-token", &["s."], r"s\.[A-Za-z0-9]{24}\b"),
    f("onepassword-secret-key", &["A3-"], r"A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}\b"),
    f("onepassword-service-token", &["ops_"], r"ops_eyJ[A-Za-z0-9+/_\-]{100,}={0,3}"),
    f("age-secret-key", &["AGE-SECRET-KEY-1"], r"AGE-SECRET-KEY-1[0-9A-Z]{50,}"),
    f("scalingo-token", &["tk-us-"], r"tk-us-[A-Za-z0-9_\-]{48}"),
    f("infracost-token", &["ico-"], r"ico-[A-Za-z0-9]{32}\b"),
    f("frameio-token", &["fio-u-"], r"fio-u-[A-Za-z0-9_=\-]{64}"),
    f("defined-networking-token", &["dnkey-"], r"dnkey-[A-Za-z0-9_=\-]{26}-[A-Za-z0-9_=\-]{52}"),
    f("dynatrace-token", &["dt0c01."], r"dt0c01\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}"),
    // AI providers.
    f("anthropic-key", &["sk-"], r"sk-ant-[a-z]+[0-9]{2}-[A-Za-z0-9_\-]{20,}"),
    f("openai-key", &["sk-"], r"sk-(?:proj|svcacct|admin)-[A-Za-z0-9_\-]{20,}"),
    f("openai-key", &["sk-"], r"sk-[A-Za-z0-9_\-]*T3BlbkFJ[A-Za-z0-9_\-]*"),
    f("openrouter-key", &["sk-"], r"sk-or-v1-[a-f0-9]{64}"),
    f("langfuse-key", &["sk-", "pk-lf-"], r"[sp]k-lf-[A-Za-z0-9\-]{20,}"),
    f("sk-key", &["sk-"], r"sk-[A-Za-z0-9]{32,}"),
    f("groq-key", &["gsk_"], r"gsk_[A-Za-z0-9]{48,}"),
    f("xai-key", &["xai-"], r"xai-[A-Za-z0-9]{60,}"),
    f("replicate-token", &["r8_"], r"r8_[A-Za-z0-9]{37}\b"),
    f("pinecone-key", &["pcsk_"], r"pcsk_[A-Za-z0-9_]{40,}"),
    f("nvidia-key", &["nvapi-"], r"nvapi-[A-Za-z0-9_\-]{60,}"),
    f("tavily-key", &["tvly-"], r"tvly-(?:dev-|prod-)?[A-Za-z0-9]{20,}"),
    f("langsmith-key", &["lsv2_"], r"lsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}"),
    f("perplexity-key", &["pplx-"], r"pplx-[A-Za-z0-9]{40,}"),
    f("huggingface-token", &["hf_", "api_org_"], r"(?:hf|api_org)_[A-Za-z0-9]{34,}"),
    weak("fireworks-key", &["fw_"], r"fw_[A-Za-z0-9]{24,}"),
    weak("voyage-key", &["pa-"], r"pa-[A-Za-z0-9_\-]{40,}"),
    // Package registries.
    f("npm-token", &["npm_"], r"npm_[A-Za-z0-9]{36,}"),
    f("pypi-token", &["pypi-"], r"pypi-AgE(?:IcHlwaS5vcmc|NdGVzdC5weXBpLm9yZw)[A-Za-z0-9_\-]{40,}"),
    f("dockerhub-token", &["dckr_"], r"dckr_(?:pat|oat)_[A-Za-z0-9_\-]{20,}"),
    f("rubygems-token", &["rubygems_"], r"rubygems_[a-f0-9]{48}"),
    f("clojars-token", &["CLOJARS_"], r"CLOJARS_[A-Za-z0-9]{60}"),
    f("nuget-key", &["oy2"], r"oy2[a-z0-9]{43}\b"),
    weak("crates-io-token", &["cio"], r"cio[A-Za-z0-9]{32}\b"),
    f("artifactory-key", &["AKCp"], r"AKCp[A-Za-z0-9]{64,}"),
    f("artifactory-reference-token", &["cmVmdGtu"], r"cmVmdGtu[A-Za-z0-9]{56}\b"),
    f("readme-key", &["rdme_"], r"rdme_[a-z0-9]{70}"),
    // Mail and messaging.
    f("sendgrid-key", &["SG."], r"SG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,}"),
    f("brevo-key", &["xkeysib-", "xsmtpsib-"], r"x(?:key|smtp)sib-[a-f0-9]{64}-[A-Za-z0-9]{16}"),
    f("mailgun-key", &["key-"], r"key-[A-Za-z0-9]{32}\b"),
    f("mailgun-public-key", &["pubkey-"], r"pubkey-[a-f0-9]{32}\b"),
    weak("mandrill-key", &["md-"], r"md-[A-Za-z0-9_\-]{22,}"),
    f("resend-key", &["re_"], r"re_[A-Za-z0-9]{8}_[A-Za-z0-9]{24}\b"),
    f("twilio-api-key", &["SK"], r"SK[0-9a-fA-F]{32}\b(?::[A-Za-z0-9]{32}\b)?"),
    f("twilio-auth-pair", &["AC"], r"(AC[0-9a-f]{32}:)[A-Za-z0-9]{32}\b"),
    f("intercom-token", &["dG9rO"], r"dG9rO[A-Za-z0-9+/]{40,}={0,2}"),
    f("firebase-server-key", &["AAAA"], r"AAAA[A-Za-z0-9_\-]{7}:APA91b[A-Za-z0-9_\-]{100,}"),
    f("twitter-bearer-token", &["AAAA"], r"A{20,}[A-Za-z0-9%]{60,}"),
    // Analytics, monitoring, productivity.
    f("new-relic-key", &["NRII-", "NRAK-", "NRJS-", "NRAA-"], r"NR(?:II|AK|JS|AA)-[A-Za-z0-9\-]{19,}"),
    f("sentry-token", &["sntrys_", "sntryu_"], r"sntry[su]_[A-Za-z0-9_+/=\-]{40,}"),
    f("posthog-personal-key", &["phx_"], r"phx_[A-Za-z0-9]{40,}"),
    f("honeycomb-key", &["hcaik_", "hcxik_", "hcxmk_"], r"hc(?:ai|xi|xm)k_[a-z0-9]{20,}"),
    f("postman-key", &["PMAK-"], r"PMAK-[A-Za-z0-9]{20,}-[A-Za-z0-9]{20,}"),
    f("linear-key", &["lin_api_", "lin_oauth_"], r"lin_(?:api|oauth)_[A-Za-z0-9]{32,}"),
    f("notion-token", &["ntn_"], r"ntn_[0-9]{11}[A-Za-z0-9]{35}"),
    f("notion-legacy-token", &["secret_"], r"secret_[A-Za-z0-9]{43}\b"),
    f("figma-token", &["figd_"], r"figd_[A-Za-z0-9_\-]{40,}"),
    f("airtable-token", &["pat"], r"pat[A-Za-z0-9]{14}\.[a-f0-9]{64}"),
    f("hubspot-token", &["pat"], concat!(r"pat-(?:na|eu|ap)[0-9]-", uuid!())),
    f("contentful-token", &["CFPAT-"], r"CFPAT-[A-Za-z0-9_\-]{40,}"),
    f("octopus-key", &["API-"], r"API-[A-Z0-9]{26}\b"),
    f("launchdarkly-key", &["api-", "sdk-", "mob-"], concat!(r"(?:api|sdk|mob)-", uuid!())),
    f("adobe-secret", &["p8e-"], r"p8e-[A-Za-z0-9]{32}\b"),
    f("easypost-key", &["EZAK", "EZTK"], r"EZ[AT]K[A-Za-z0-9]{54}\b"),
    f("duffel-token", &["duffel_"], r"duffel_(?:test|live)_[A-Za-z0-9_=\-]{43}"),
    f("intra42-secret", &["s-s4t2"], r"s-s4t2(?:ud|af)-[a-f0-9]{64}"),
    f("settlemint-token", &["sm_"], r"sm_(?:aat|pat|sat)_[A-Za-z0-9]{16}\b"),
    f("zoho-token", &["1000."], r"1000\.[a-f0-9]{32}\.[a-f0-9]{32}"),
    f("salesforce-session", &["00D"], r"00D[A-Za-z0-9]{12,15}![A-Za-z0-9_.]{80,}"),
    f("dropbox-token", &["sl."], r"sl\.[A-Za-z0-9_.\-]{130,}"),
    f("instagram-token", &["IGQV"], r"IGQV[A-Za-z0-9_\-]{100,}"),
    f("facebook-token", &["EAAC", "EAAM"], r"EAA[CM][A-Za-z0-9]{100,}"),
    f("mapbox-token", &["pk.", "sk.", "tk."], r"[pst]k\.eyJ[A-Za-z0-9_\-]{20,}\.[A-Za-z0-9_\-]{20,}"),
    // Tokens of a general format.
    f("grafana-api-key", &["eyJ"], r"eyJrIjoi[A-Za-z0-9]{60,}={0,3}"),
    f("jwt", &["eyJ"], r"eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{4,}\.[A-Za-z0-9_\-]*"),
    f("jwt-base64", &["ZXlK"], r"ZXlK[A-Za-z0-9+/]{60,}={0,2}"),
];

/// Shapes without a literal start, as one alternation run over the whole text. Each has at
/// most one capture group, at its very start: text kept in front of the marker.
const UNTRIGGERED: &[&str] = &[
    // AWS secret access keys, only right after their name.
    r#"((?i:aws[_\-. ]?secret(?:[_\-. ]?access)?[_\-. ]?key|secret[_\-. ]?access[_\-. ]?key)["']?\s*(?:[:=]|=>)?\s*["']?)[A-Za-z0-9/+]{40,}"#,
    // Discord bot tokens; Telegram bot tokens (a `bot` prefix stays).
    r"\b[MNO][A-Za-z0-9_\-]{23,27}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,}",
    r"\b(bot)?[0-9]{8,10}:A[A-Za-z0-9_\-]{34,}",
    // Facebook app access tokens `appid|secret` (also percent-encoded).
    r"\b[0-9]{15,16}(?:\||%7[Cc])[A-Za-z0-9_\-]{27,40}",
    // Mailchimp API keys with their data-centre suffix.
    r"\b[a-f0-9]{32}-us[0-9]{1,2}\b",
    // Asana personal access tokens.
    r"\b[12]/[0-9]{10,19}(?:/[0-9]+)?:[a-f0-9]{32}\b",
    // Azure AD client secrets (`…8Q~…`).
    r"\b[A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.\-]{31,34}",
    // Terraform Cloud tokens (`….atlasv1.…`).
    r"\b[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=\-]{60,}",
    // MaxMind license keys.
    r"\b[A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk\b",
];

/// Every trigger, longest first.
static TRIGGERS: LazyLock<(Regex, HashMap<&'static str, Vec<usize>>)> = LazyLock::new(|| {
    let mut by_trigger: HashMap<&'static str, Vec<usize>> = HashMap::new();
    for (i, fam) in FAMILIES.iter().enumerate() {
        for &t in fam.triggers {
            by_trigger.entry(t).or_default().push(i);
        }
    }
    let mut literals: Vec<&str> = by_trigger.keys().copied().collect();
    literals.sort_by_key(|t| (std::cmp::Reverse(t.len()), *t));
    let alternation: Vec<String> = literals
        .iter()
        .map(|t| {
            // `\b` only where the trigger starts with a word character.
            let lead = if t.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_') {
                r"\b"
            } else {
                ""
            };
            format!("{lead}{}", regex::escape(t))
        })
        .collect();
    let re = Regex::new(&format!("(?-u)(?:{})", alternation.join("|"))).expect("valid pattern");
    (re, by_trigger)
});

static UNTRIGGERED_RE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!("(?-u){}", UNTRIGGERED.join("|"))).expect("valid pattern")
});

/// Each family's pattern, anchored, compiled when first needed.
static COMPILED: LazyLock<Vec<OnceLock<Regex>>> =
    LazyLock::new(|| FAMILIES.iter().map(|_| OnceLock::new()).collect());

fn family_regex(i: usize) -> &'static Regex {
    COMPILED[i].get_or_init(|| {
        Regex::new(&format!("(?-u)^(?:{})", FAMILIES[i].pattern)).expect("valid pattern")
    })
}

/// The secret part (without any kept text) of the family `i` token starting at `text[at..]`.
fn match_family(text: &str, at: usize, i: usize) -> Option<(usize, usize)> {
    let caps = family_regex(i).captures(&text[at..])?;
    let whole = caps.get(0)?;
    let kept = caps.get(1).map_or(0, |m| m.end());
    let fam = &FAMILIES[i];
    if fam.check == Check::Mixed {
        let trigger = fam
            .triggers
            .iter()
            .find(|t| whole.as_str().starts_with(**t))
            .map_or(0, |t| t.len());
        let body = &whole.as_str()[trigger..];
        let letters = body.bytes().any(|c| c.is_ascii_alphabetic());
        let digits = body.bytes().any(|c| c.is_ascii_digit());
        if !(letters && digits) {
            return None;
        }
    }
    (whole.end() > kept).then_some((at + kept, at + whole.end()))
}

/// Byte ranges of provider tokens in `text`, sorted and disjoint. Text a family keeps in
/// front of its token (a URL path, a name) is not part of the range.
pub fn find(text: &str) -> Vec<(usize, usize)> {
    let mut ranges = Vec::new();
    let (triggers, by_trigger) = &*TRIGGERS;
    let mut pos = 0;
    while let Some(m) = triggers.find_at(text, pos) {
        let found = by_trigger
            .get(m.as_str())
            .into_iter()
            .flatten()
            .find_map(|&i| match_family(text, m.start(), i));
        match found {
            Some(range) => {
                ranges.push(range);
                pos = range.1;
            }
            None => pos = m.start() + 1,
        }
        // Triggers and tokens are ASCII, so `pos` is a char boundary unless a token was
        // not found; then step to the next one.
        while !text.is_char_boundary(pos) {
            pos += 1;
        }
    }
    for caps in UNTRIGGERED_RE.captures_iter(text) {
        let whole = caps.get(0).expect("group 0 always matches");
        let start = caps
            .iter()
            .skip(1)
            .flatten()
            .next()
            .map_or(whole.start(), |kept| kept.end());
        if whole.end() > start {
            ranges.push((start, whole.end()));
        }
    }
    merge(ranges)
}

/// Sorted, with overlapping or touching ranges joined.
fn merge(mut ranges: Vec<(usize, usize)>) -> Vec<(usize, usize)> {
    ranges.sort_unstable();
    let mut out: Vec<(usize, usize)> = Vec::with_capacity(ranges.len());
    for (start, end) in ranges {
        match out.last_mut() {
            Some(last) if start <= last.1 => last.1 = last.1.max(end),
            _ => out.push((start, end)),
        }
    }
    out
}

#[cfg(test)]
#[path = "providers_tests.rs"]
mod tests;
