//! Payments and commerce: their documented token formats, one row each.

use super::Format;

pub(super) const FORMATS: &[Format] = &[
    // Stripe's key page lists the prefixes: `sk_test_` / `sk_live_` for secret keys and
    // `rk_test_` / `rk_live_` for restricted keys (`pk_` keys are publishable and safe to
    // expose, so they are left). The sample key in Stripe's API reference has 24 letters and
    // digits after the prefix; Stripe's upgrade notes say opaque strings may grow, up to 255
    // characters, so longer keys are taken whole.
    Format {
        vendor: "Stripe",
        kind: "secret or restricted API key",
        doc: "https://docs.stripe.com/keys",
        triggers: &["sk_live_", "sk_test_", "rk_live_", "rk_test_"],
        pattern: r"[sr]k_(?:live|test)_[A-Za-z0-9]{24,247}",
        sample: "sk_live_{b62:24}",
        near_miss: "sk_live_{b62:12}",
        ..Format::ROW
    },
    // The Stripe CLI prints the signing secret it uses: `whsec_` and 32 letters and digits.
    Format {
        vendor: "Stripe",
        kind: "webhook signing secret",
        doc: "https://github.com/stripe/stripe-cli/wiki/listen-command",
        triggers: &["whsec_"],
        pattern: r"whsec_[A-Za-z0-9]{32,}",
        sample: "whsec_{b62:32}",
        near_miss: "whsec_{b62:16}",
        ..Format::ROW
    },
    // Shopify's changelog: access tokens grew from 32 to 38 characters by gaining a static
    // prefix, `shpat_` (public apps), `shpca_` (custom apps) or `shppa_` (private apps).
    Format {
        vendor: "Shopify",
        kind: "access token",
        doc: "https://shopify.dev/changelog/length-of-the-shopify-access-token-is-increasing",
        triggers: &["shpat_", "shpca_", "shppa_"],
        pattern: r"shp(?:at|ca|pa)_[A-Za-z0-9]{32}\b",
        sample: "shpat_{b62:32}",
        near_miss: "shpat_{b62:20}",
        ..Format::ROW
    },
    // Shopify's changelog: app secret keys grew from 32 to 38 characters with the prefix
    // `shpss_`.
    Format {
        vendor: "Shopify",
        kind: "app secret key",
        doc: "https://shopify.dev/changelog/app-secret-key-length-has-increased",
        triggers: &["shpss_"],
        pattern: r"shpss_[A-Za-z0-9]{32}\b",
        sample: "shpss_{b62:32}",
        near_miss: "shpss_{b62:20}",
        ..Format::ROW
    },
    // Shippo: live keys begin with `shippo_live_`, test keys with `shippo_test_`. The page
    // gives no length; the example token in Shippo's own SDK readme has 32 hex digits after
    // the prefix, taken as the least.
    Format {
        vendor: "Shippo",
        kind: "API token",
        doc: "https://docs.goshippo.com/guides/authentication",
        triggers: &["shippo_live_", "shippo_test_"],
        pattern: r"shippo_(?:live|test)_[A-Za-z0-9]{32,}",
        sample: "shippo_live_{hex:32}",
        near_miss: "shippo_test_token",
        ..Format::ROW
    },
    // Flutterwave: keys carry `_TEST` in the prefix in test mode; the page's example key is
    // the prefix, a dash, 32 hex digits and `-X`. Secret keys start `FLWSECK` (public keys,
    // `FLWPUBK`, are meant for front ends and are left).
    Format {
        vendor: "Flutterwave",
        kind: "secret key",
        doc: "https://developer.flutterwave.com/docs/authentication",
        triggers: &["FLWSECK"],
        pattern: r"FLWSECK(?:_TEST)?-[0-9a-fA-F]{32}-X\b",
        sample: "FLWSECK_TEST-{hex:32}-X",
        near_miss: "FLWSECK_TEST-SANDBOXDEMOKEY-X",
        ..Format::ROW
    },
    // Razorpay: API keys begin with `rzp_test_` in test mode and `rzp_live_` in live mode.
    // The page gives no length; at least 10 letters and digits must follow.
    Format {
        vendor: "Razorpay",
        kind: "API key ID",
        doc: "https://razorpay.com/docs/sg/payments/quickstart",
        triggers: &["rzp_live_", "rzp_test_"],
        pattern: r"rzp_(?:live|test)_[A-Za-z0-9]{10,}",
        sample: "rzp_live_{b62:14}",
        near_miss: "rzp_test_key",
        ..Format::ROW
    },
    // Paddle: keys made after May 2025 are `pdl_`, the environment (`live_` or `sdbx_`),
    // `apikey_`, a 26-character lower-case ID, `_`, and a 26-character secret (the page's
    // example secret holds an underscore too).
    Format {
        vendor: "Paddle",
        kind: "API key",
        doc: "https://developer.paddle.com/api-reference/about/api-keys",
        triggers: &["pdl_"],
        pattern: r"pdl_(?:live|sdbx)_apikey_[0-9a-z]{26}_[A-Za-z0-9_]{26}\b",
        sample: "pdl_live_apikey_{an:26}_{b62:26}",
        near_miss: "pdl_live_apikey_{an:26}",
        ..Format::ROW
    },
    // Mercado Pago's token endpoint answers with an access token of the form
    // `APP_USR-4934588586838432-XXXXXXXX-241983636`: 16 digits, a masked middle, and the
    // user ID in digits after the last dash. The public key (`APP_USR-` and hex groups) is
    // not a secret and is left.
    Format {
        vendor: "Mercado Pago",
        kind: "access token",
        doc: "https://mercadopago.com.mx/developers/en/reference/oauth/_oauth_token/post",
        triggers: &["APP_USR-"],
        pattern: r"APP_USR-[0-9]{10,}-[A-Za-z0-9-]{6,}-[0-9]{6,}\b",
        sample: "APP_USR-{dig:16}-{b62:8}-{dig:9}",
        near_miss: "APP_USR-{hex:8}-{b62:8}-{hex:12}",
        ..Format::ROW
    },
    // Plaid: tokens are `[type]-[environment]-[uuid]`; an access token is `access-` and an
    // asset report token `asset-report-`, then `sandbox`, `development` or `production`,
    // then a UUID.
    Format {
        vendor: "Plaid",
        kind: "access or asset report token",
        doc: "https://plaid.com/docs/quickstart/glossary/",
        triggers: &["access-", "asset-report-"],
        pattern: concat!(
            r"(?:access|asset-report)-(?:sandbox|development|production)-",
            uuid!()
        ),
        sample: "access-production-{uuid}",
        near_miss: "access-production-{hex:12}",
        ..Format::ROW
    },
];
