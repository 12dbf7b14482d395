//! Chat, webhooks, mail and text messages: their documented token formats, one row each.

use super::{Check, Format};

pub(super) const FORMATS: &[Format] = &[
    Format {
        vendor: "slack",
        kind: "token",
        doc: "",
        triggers: &["xox"],
        pattern: r"xox(?:[abposr]|e(?:\.xox[bp])?)-[A-Za-z0-9\-]{10,}",
        sample: "xoxb-{dig:12}-{b62:24}",
        near_miss: "xoxb-",
        ..Format::ROW
    },
    Format {
        vendor: "slack",
        kind: "app-token",
        doc: "",
        triggers: &["xapp-"],
        pattern: r"xapp-[0-9]-[A-Za-z0-9\-]{10,}",
        sample: "xapp-1-A{un:10}-{an:64}",
        near_miss: "xapp-x",
        ..Format::ROW
    },
    Format {
        vendor: "slack",
        kind: "webhook",
        doc: "",
        triggers: &["hooks.slack.com/"],
        pattern: r"(hooks\.slack\.com/(?:services|workflows|triggers)/)[A-Za-z0-9_/\-]{20,}",
        kept: "hooks.slack.com/services/",
        sample: "T{un:8}/B{un:10}/{b62:24}",
        near_miss: "hooks.slack.com/services/",
        ..Format::ROW
    },
    Format {
        vendor: "discord",
        kind: "webhook",
        doc: "",
        triggers: &["discord.com/", "discordapp.com/"],
        pattern: r"(discord(?:app)?\.com/api/webhooks/[0-9]+/)[A-Za-z0-9_\-]{20,}",
        kept: "discord.com/api/webhooks/123456789012345678/",
        sample: "{url:68}",
        near_miss: "discord.com/api/webhooks/",
        ..Format::ROW
    },
    Format {
        vendor: "discord",
        kind: "mfa-token",
        doc: "",
        triggers: &["mfa."],
        pattern: r"mfa\.[A-Za-z0-9_\-]{80,}",
        sample: "mfa.{url:84}",
        near_miss: "mfa.enabled",
        ..Format::ROW
    },
    Format {
        vendor: "teams",
        kind: "webhook",
        doc: "",
        triggers: &["webhook.office.com/"],
        pattern: r"(webhook\.office\.com/webhookb2/)[A-Za-z0-9@/_\-]{40,}",
        kept: "webhook.office.com/webhookb2/",
        sample: "{uuid}@{uuid}/IncomingWebhook/{an:32}/{uuid}",
        near_miss: "webhook.office.com/webhookb2/",
        ..Format::ROW
    },
    Format {
        vendor: "zapier",
        kind: "webhook",
        doc: "",
        triggers: &["hooks.zapier.com/"],
        pattern: r"(hooks\.zapier\.com/hooks/catch/)[0-9]+/[A-Za-z0-9]+",
        kept: "hooks.zapier.com/hooks/catch/",
        sample: "{dig:7}/{an:7}",
        near_miss: "hooks.zapier.com/hooks/catch/",
        ..Format::ROW
    },
    Format {
        vendor: "ifttt",
        kind: "webhook",
        doc: "",
        triggers: &["maker.ifttt.com/"],
        pattern: r"(maker\.ifttt\.com/(?:trigger/[A-Za-z0-9_\-.]+/(?:json/)?)?with/key/)[A-Za-z0-9_\-]{16,}",
        kept: "maker.ifttt.com/trigger/backup_done/with/key/",
        sample: "{url:22}",
        near_miss: "maker.ifttt.com/trigger/x",
        ..Format::ROW
    },
    Format {
        vendor: "sendgrid",
        kind: "key",
        doc: "",
        triggers: &["SG."],
        pattern: r"SG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,}",
        sample: "SG.{url:22}.{url:43}",
        near_miss: "SG.foo.bar",
        ..Format::ROW
    },
    Format {
        vendor: "brevo",
        kind: "key",
        doc: "",
        triggers: &["xkeysib-", "xsmtpsib-"],
        pattern: r"x(?:key|smtp)sib-[a-f0-9]{64}-[A-Za-z0-9]{16}",
        sample: "xkeysib-{hex:64}-{b62:16}",
        near_miss: "xkeysib-x",
        ..Format::ROW
    },
    Format {
        vendor: "mailgun",
        kind: "key",
        doc: "",
        triggers: &["key-"],
        pattern: r"key-[A-Za-z0-9]{32}\b",
        sample: "key-{hex:32}",
        near_miss: "key-value",
        ..Format::ROW
    },
    Format {
        vendor: "mailgun",
        kind: "public-key",
        doc: "",
        triggers: &["pubkey-"],
        pattern: r"pubkey-[a-f0-9]{32}\b",
        sample: "pubkey-{hex:32}",
        near_miss: "pubkey-file",
        ..Format::ROW
    },
    Format {
        vendor: "mandrill",
        kind: "key",
        doc: "",
        triggers: &["md-"],
        pattern: r"md-[A-Za-z0-9_\-]{22,}",
        check: Check::Mixed,
        sample: "md-{url:21}1",
        near_miss: "md-heading-level-one-xy",
        ..Format::ROW
    },
    Format {
        vendor: "resend",
        kind: "key",
        doc: "",
        triggers: &["re_"],
        pattern: r"re_[A-Za-z0-9]{8}_[A-Za-z0-9]{24}\b",
        sample: "re_{b62:8}_{b62:24}",
        near_miss: "re_run_x",
        ..Format::ROW
    },
    Format {
        vendor: "twilio",
        kind: "api-key",
        doc: "",
        triggers: &["SK"],
        pattern: r"SK[0-9a-fA-F]{32}\b(?::[A-Za-z0-9]{32}\b)?",
        sample: "SK{hex:32}",
        near_miss: "SKU1234",
        ..Format::ROW
    },
    Format {
        vendor: "twilio",
        kind: "auth-pair",
        doc: "",
        triggers: &["AC"],
        pattern: r"(AC[0-9a-f]{32}:)[A-Za-z0-9]{32}\b",
        kept: "AC{hex:32}:",
        sample: "{b62:32}",
        near_miss: "AC{hex:32}",
        ..Format::ROW
    },
    Format {
        vendor: "intercom",
        kind: "token",
        doc: "",
        triggers: &["dG9rO"],
        pattern: r"dG9rO[A-Za-z0-9+/]{40,}={0,2}",
        sample: "dG9rOj{b64:54}=",
        near_miss: "dG9rO",
        ..Format::ROW
    },
    Format {
        vendor: "firebase",
        kind: "server-key",
        doc: "",
        triggers: &["AAAA"],
        pattern: r"AAAA[A-Za-z0-9_\-]{7}:APA91b[A-Za-z0-9_\-]{100,}",
        sample: "AAAA{url:7}:APA91b{url:134}",
        near_miss: "AAAA",
        ..Format::ROW
    },
    Format {
        vendor: "twitter",
        kind: "bearer-token",
        doc: "",
        triggers: &["AAAA"],
        pattern: r"A{20,}[A-Za-z0-9%]{60,}",
        sample: "AAAAAAAAAAAAAAAAAAAAAA{b62:90}",
        near_miss: "AAAAAAAA",
        ..Format::ROW
    },
    Format {
        vendor: "discord-bot",
        kind: "token",
        doc: "",
        pattern: r"\b[MNO][A-Za-z0-9_\-]{23,27}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,}",
        sample: "M{url:25}.{url:6}.{url:38}",
        near_miss: "M.x.y",
        ..Format::ROW
    },
    Format {
        vendor: "telegram-bot",
        kind: "token",
        doc: "",
        pattern: r"\b(bot)?[0-9]{8,10}:A[A-Za-z0-9_\-]{34,}",
        kept: "bot",
        sample: "{dig:10}:AA{url:33}",
        near_miss: "bot1234567890:A",
        ..Format::ROW
    },
    Format {
        vendor: "mailchimp",
        kind: "token",
        doc: "",
        pattern: r"\b[a-f0-9]{32}-us[0-9]{1,2}\b",
        sample: "{hex:32}-us21",
        near_miss: "{hex:32}-us",
        ..Format::ROW
    },
];
