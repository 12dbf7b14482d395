//! Chat, webhooks, mail and text messages: their documented token formats, one row each.

use super::{Check, Format};

pub(super) const FORMATS: &[Format] = &[
    // Slack: bot token strings begin with `xoxb-`, user token strings with `xoxp-`, and
    // token strings may be up to 255 characters long. The prefixes are short, so the rest
    // must hold a letter and a digit (`xoxb-your-bot-token` is a placeholder, not a token).
    Format {
        vendor: "Slack",
        kind: "bot or user token",
        doc: "https://api.slack.com/concepts/token-types",
        triggers: &["xoxb-", "xoxp-"],
        pattern: r"xox[bp]-[A-Za-z0-9-]{10,250}",
        check: Check::Mixed,
        sample: "xoxb-{b62:48}",
        near_miss: "xoxb-your-bot-token",
        ..Format::ROW
    },
    // Slack: app-level token strings begin with `xapp-`.
    Format {
        vendor: "Slack",
        kind: "app-level token",
        doc: "https://api.slack.com/authentication/token-types?nojsmode=1",
        triggers: &["xapp-"],
        pattern: r"xapp-[A-Za-z0-9-]{10,250}",
        check: Check::Mixed,
        sample: "xapp-{b62:48}",
        near_miss: "xapp-level-token",
        ..Format::ROW
    },
    // Slack's token rotation method returns an app configuration token `xoxe.xoxp-...`.
    Format {
        vendor: "Slack",
        kind: "app configuration token",
        doc: "https://api.slack.com/methods/tooling.tokens.rotate",
        triggers: &["xoxe."],
        pattern: r"xoxe\.xox[bp]-[A-Za-z0-9-]{10,245}",
        check: Check::Mixed,
        sample: "xoxe.xoxp-{b62:48}",
        near_miss: "xoxe.xoxp-...",
        ..Format::ROW
    },
    // The same method takes and returns a refresh token `xoxe-...`; its example
    // `xoxe-1-abcdefg` is a shortened placeholder, too short to be a token.
    Format {
        vendor: "Slack",
        kind: "configuration refresh token",
        doc: "https://api.slack.com/methods/tooling.tokens.rotate",
        triggers: &["xoxe-"],
        pattern: r"xoxe-[A-Za-z0-9-]{10,250}",
        check: Check::Mixed,
        sample: "xoxe-1-{b62:48}",
        near_miss: "xoxe-1-abcdefg",
        ..Format::ROW
    },
    // Slack's webhook guide: a webhook URL looks like
    // `https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX`, a
    // workspace ID, a webhook ID and a secret. The path after `services/` is the secret.
    Format {
        vendor: "Slack",
        kind: "incoming webhook URL",
        doc: "https://api.slack.com/messaging/webhooks",
        triggers: &["hooks.slack.com/"],
        pattern: r"(hooks\.slack\.com/services/)T[A-Z0-9]{8,}/B[A-Z0-9]{8,}/[A-Za-z0-9]{24,}",
        kept: "hooks.slack.com/services/",
        sample: "T{un:8}/B{un:8}/{b62:24}",
        near_miss: "hooks.slack.com/services/T{un:8}/B{un:8}",
        ..Format::ROW
    },
    // Discord executes a webhook at `/webhooks/{webhook.id}/{webhook.token}`; the ID is a
    // snowflake (digits) and the page's example token is 100 hex digits. Tokens are taken
    // as 32 or more URL-safe characters after the ID, with or without an API version. The
    // kept ID is written as today's 19-digit snowflakes, which start with `1`: an ID starting
    // 3 to 6 that passes Luhn is taken for a card number by the personal-data layer.
    Format {
        vendor: "Discord",
        kind: "webhook URL",
        doc: "https://discordapp.com/developers/docs/resources/webhook",
        triggers: &["discord.com/", "discordapp.com/"],
        pattern: r"(discord(?:app)?\.com/api/(?:v[0-9]{1,2}/)?webhooks/[0-9]{15,20}/)[A-Za-z0-9_-]{32,}",
        kept: "discord.com/api/webhooks/1{dig:18}/",
        sample: "{hex:100}",
        near_miss: "discord.com/channels/{dig:18}/{dig:18}",
        ..Format::ROW
    },
    // Twilio SendGrid's API key page: `Authorization: Bearer
    // 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`, that is `SG.`, 22
    // characters, a dot and 43 characters, dashes among them; Twilio's page on API keys
    // (https://www.twilio.com/docs/sendgrid/ui/account-and-settings/api-keys) adds that every
    // key is 69 characters long, which that shape makes. The 22 characters alone are the key's
    // ID, shown in the console, and are left.
    Format {
        vendor: "Twilio SendGrid",
        kind: "API key",
        doc: "https://sendgrid.com/docs/Classroom/Send/How_Emails_Are_Sent/api_keys.html",
        triggers: &["SG."],
        pattern: r"SG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}",
        sample: "SG.{url:22}.{url:43}",
        near_miss: "SG.{url:22}",
        ..Format::ROW
    },
    // Resend's API reference: creating a key returns `"token":
    // "re_c1tpEyD8_NKFusih9vKVQknRAQfmFcWCv"`, that is `re_`, 8 letters and digits, `_` and 24
    // letters and digits. The page's own client examples use the placeholder `re_123456789`.
    // `re_` is a short prefix, so the rest must hold a letter and a digit.
    Format {
        vendor: "Resend",
        kind: "API key",
        doc: "https://resend.com/docs/api-reference/api-keys/create-api-key",
        triggers: &["re_"],
        pattern: r"re_[A-Za-z0-9]{8}_[A-Za-z0-9]{24}\b",
        check: Check::Mixed,
        sample: "re_{b62:8}_{b62:24}",
        near_miss: "re_123456789",
        ..Format::ROW
    },
    // Brevo's own CLI readme sets `BREVO_API_KEY=xkeysib-...` for non-interactive logins. It
    // gives the prefix only: the rest is bounded from below at 32 letters, digits and dashes
    // and left open above. (Brevo's SMTP keys are not described on a Brevo page, so they have
    // no row.)
    Format {
        vendor: "Brevo",
        kind: "API key",
        doc: "https://github.com/getbrevo/brevo-cli",
        triggers: &["xkeysib-"],
        pattern: r"xkeysib-[A-Za-z0-9\-]{32,}",
        sample: "xkeysib-{b62:64}",
        near_miss: "xkeysib-...",
        ..Format::ROW
    },
    // Zapier's webhooks guide: a Catch Hook trigger gets a URL "sort of like"
    // `https://hooks.zapier.com/hooks/catch/1234567/f8f22dgg/`, "secured by obscurity": the
    // account's number is kept, the part after it is the secret.
    Format {
        vendor: "Zapier",
        kind: "Catch Hook webhook URL",
        doc: "https://help.zapier.com/hc/en-us/articles/8496083355661-How-to-get-started-with-Webhooks-by-Zapier",
        triggers: &["hooks.zapier.com/"],
        pattern: r"(hooks\.zapier\.com/hooks/catch/[0-9]+/)[A-Za-z0-9]{6,}",
        kept: "hooks.zapier.com/hooks/catch/{dig:7}/",
        sample: "{an:8}",
        near_miss: "hooks.zapier.com/hooks/catch/{dig:7}/",
        ..Format::ROW
    },
    // Telegram: a bot token looks like `123456:ABC-DEF1234ghIkl-zyx57W2v1u123ew11`, the
    // bot's number, a colon and 34 URL-safe characters (both of Telegram's examples start
    // that part with `A`). Requests put it after `bot` in the URL path, which is kept.
    // There is no literal start, so this row runs over the whole text.
    Format {
        vendor: "Telegram",
        kind: "bot token",
        doc: "https://core.telegram.org/bots/api",
        pattern: r"\b(bot)?[0-9]{6,12}:A[A-Za-z0-9_-]{33,34}",
        kept: "bot",
        sample: "{dig:9}:A{url:33}",
        near_miss: "{dig:8}:{uuid}",
        ..Format::ROW
    },
];
