//! Source hosting, CI and package registries: their documented token formats, one row each.
//!
//! Each row follows the vendor page in its `doc`; where that page leaves something open
//! (an alphabet, an upper bound) the comment above the row says what was chosen and why.

use super::{Check, Format};

/// The GitLab prefixes other than `glpat-` and `glrt-`, as GitLab's secret detection page
/// lists them.
const GITLAB_OTHER: &[&str] = &[
    "gldt-", "glptt-", "glcbt-", "glft-", "glimt-", "glagent-", "glsoat-", "glffct-", "gloas-",
];

pub(super) const FORMATS: &[Format] = &[
    // GitHub's changelog: one prefix per token type, the alphabet `[A-Za-z0-9_]`, the
    // length unchanged for now (40 in all, so 36 after the prefix) but allowed to grow to
    // 255 in all.
    Format {
        vendor: "GitHub",
        kind: "personal access, OAuth, user-to-server or refresh token",
        doc: "https://github.blog/changelog/2021-03-31-authentication-token-format-updates-are-generally-available",
        triggers: &["ghp_", "gho_", "ghu_", "ghr_"],
        pattern: r"gh[pour]_[A-Za-z0-9_]{36,251}",
        sample: "ghp_{b62:36}",
        near_miss: "ghp_{b62:20}",
        ..Format::ROW
    },
    // Installation tokens keep `ghs_` but are moving from the 36-character body to
    // `ghs_APPID_JWT`: the app's number, an underscore and a JWT (three base64url parts
    // joined by dots).
    Format {
        vendor: "GitHub",
        kind: "App installation token",
        doc: "https://docs.github.com/en/enterprise-server@3.22/apps/creating-github-apps/authenticating-with-a-github-app/generating-an-installation-access-token-for-a-github-app",
        triggers: &["ghs_"],
        pattern: r"ghs_(?:[0-9]+_[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}|[A-Za-z0-9_]{36,251})",
        sample: "ghs_{dig:7}_eyJ{url:33}.eyJ{url:400}.{url:86}",
        near_miss: "ghs_{b62:20}",
        ..Format::ROW
    },
    // GitHub's "About authentication to GitHub" page (in GitHub's own docs repository) lists
    // `github_pat_` as the prefix of fine-grained personal access tokens and gives no length
    // or alphabet. The alphabet and ceiling are the ones GitHub's token-format changelog
    // (the first row) sets for its tokens: `[A-Za-z0-9_]`, at most 255 characters in all, so
    // at most 244 after the prefix; at least the 36 of the other token bodies. The body may
    // hold underscores, so a setting name such as `github_pat_expiry_policy_for_the_org` has
    // the same shape: the body must also hold a letter and a digit.
    Format {
        vendor: "GitHub",
        kind: "fine-grained personal access token",
        doc: "https://github.com/github/docs/blob/main/content/authentication/keeping-your-account-and-data-secure/about-authentication-to-github.md",
        triggers: &["github_pat_"],
        pattern: r"github_pat_[A-Za-z0-9_]{36,244}",
        check: Check::Mixed,
        sample: "github_pat_{b62:82}",
        near_miss: "github_pat_expiration_policy_for_the_whole_organization",
        ..Format::ROW
    },
    // GitLab's merge request making PATs routable: the old body is 20 base64url
    // characters (its example `glpat-ts8y8Mk2gxi-xvXVsxfN`), a routable one 37 to 310.
    // Routable tokens carry a version and a checksum after dots, so dots are allowed
    // inside the body, not at its end.
    Format {
        vendor: "GitLab",
        kind: "personal access token",
        doc: "https://gitlab.com/gitlab-org/gitlab/-/merge_requests/169322",
        triggers: &["glpat-"],
        pattern: r"glpat-[A-Za-z0-9_\-][A-Za-z0-9_.\-]{18,308}[A-Za-z0-9_\-]",
        sample: "glpat-{url:20}",
        near_miss: "glpat-{url:12}",
        ..Format::ROW
    },
    // GitLab Runner's merge request for `glrt-` tokens, with the example
    // `glrt-Mxs8FE84XoupAykHFEiP` (20 characters after the prefix). Newer, routable
    // runner tokens are longer, so no upper bound.
    Format {
        vendor: "GitLab",
        kind: "runner authentication token",
        doc: "https://gitlab.com/gitlab-org/gitlab-runner/-/merge_requests/3910",
        triggers: &["glrt-"],
        pattern: r"glrt-[A-Za-z0-9_\-][A-Za-z0-9_.\-]{18,}[A-Za-z0-9_\-]",
        sample: "glrt-{b62:20}",
        near_miss: "glrt-{b62:10}",
        ..Format::ROW
    },
    // The page lists the prefixes only; the body is taken to be at least the 20
    // characters GitLab's other token examples show (the two rows above), in the same
    // alphabet.
    Format {
        vendor: "GitLab",
        kind: "deploy, CI job, trigger, feed, mail, agent, SCIM, feature flag or OAuth secret",
        doc: "https://docs.gitlab.com/17.4/ee/user/application_security/secret_detection/client/detected_secrets.html",
        triggers: GITLAB_OTHER,
        pattern: r"gl(?:dt|ptt|cbt|ft|imt|agent|soat|ffct|oas)-[A-Za-z0-9_\-][A-Za-z0-9_.\-]{18,}[A-Za-z0-9_\-]",
        sample: "gldt-{url:20}",
        near_miss: "gldt-{url:10}",
        ..Format::ROW
    },
    // CircleCI's changelog: `CCIPAT_` or `CCIPRJ_`, a base58 UUID (22 characters in its
    // example, 21 when the UUID is small), `_` and 40 hex digits. The templates have no
    // base58 alphabet, so the UUID part accepts letters and digits.
    Format {
        vendor: "CircleCI",
        kind: "personal or project API token",
        doc: "https://circleci.com/changelog/new-format-for-api-access-tokens/",
        triggers: &["CCIPAT_", "CCIPRJ_"],
        pattern: r"CCIP(?:AT|RJ)_[A-Za-z0-9]{21,22}_[0-9a-f]{40}\b",
        sample: "CCIPAT_{b62:22}_{hex:40}",
        near_miss: "CCIPAT_{b62:22}",
        ..Format::ROW
    },
    // Buildkite's token security page, example `bkua_MTA.4f6c…18ce`: a short base64
    // identifier, a dot and 40 hex digits.
    Format {
        vendor: "Buildkite",
        kind: "API access token",
        doc: "https://buildkite.com/docs/platform/security/tokens",
        triggers: &["bkua_"],
        pattern: r"bkua_[A-Za-z0-9]{2,32}\.[0-9a-f]{40}\b",
        sample: "bkua_{b62:3}.{hex:40}",
        near_miss: "bkua_{b62:3}.{hex:20}",
        ..Format::ROW
    },
    // Same page, example `bkaa_MTA.Miyf…PJEu`: the identifier, a dot and 77 letters and
    // digits (base58 in the example, whose length can vary by a character or two).
    Format {
        vendor: "Buildkite",
        kind: "agent session token",
        doc: "https://buildkite.com/docs/platform/security/tokens",
        triggers: &["bkaa_"],
        pattern: r"bkaa_[A-Za-z0-9]{2,32}\.[A-Za-z0-9]{72,}\b",
        sample: "bkaa_{b62:3}.{b62:77}",
        near_miss: "bkaa_{b62:3}.{b62:30}",
        ..Format::ROW
    },
    // Same page: `bkaj_` followed by a JWT.
    Format {
        vendor: "Buildkite",
        kind: "agent job token",
        doc: "https://buildkite.com/docs/platform/security/tokens",
        triggers: &["bkaj_"],
        pattern: r"bkaj_[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}",
        sample: "bkaj_eyJ{url:17}.eyJ{url:260}.{url:86}",
        near_miss: "bkaj_{low:10}",
        ..Format::ROW
    },
    // SonarSource's community thread (the prefixes since SonarQube 9.5, confirmed there by
    // SonarSource staff), with the example `squ_fabb…1333`: 40 hex digits.
    Format {
        vendor: "SonarQube",
        kind: "user, project analysis or global analysis token",
        doc: "https://community.sonarsource.com/t/tiny-feature-request-use-a-different-token-prefix-for-tokens-generated-for-badge-urls/78433",
        triggers: &["squ_", "sqp_", "sqa_"],
        pattern: r"sq[upa]_[0-9a-f]{40}\b",
        sample: "squ_{hex:40}",
        near_miss: "sqp_{hex:20}",
        ..Format::ROW
    },
    // Atlassian's Bamboo API reference (BitbucketCloudApiTokenUtils.isPasswordAToken): "An
    // API token is identified by the prefix \"ATAT\"". Atlassian's account page says API
    // tokens have a varied length and gives no alphabet, so the body is taken as at least 40
    // base64url characters or `=` (so that a token is not cut short at any of them), holding
    // a letter and a digit.
    Format {
        vendor: "Atlassian",
        kind: "API token",
        doc: "https://docs.atlassian.com/atlassian-bamboo/11.0.7/com/atlassian/bamboo/repository/configuration/BitbucketCloudApiTokenUtils.html",
        triggers: &["ATAT"],
        pattern: r"ATAT[A-Za-z0-9_\-=]{40,}",
        check: Check::Mixed,
        sample: "ATAT{url:188}",
        near_miss: "ATAT{url:20}",
        ..Format::ROW
    },
    // Sourcegraph's secret formats page: `sgp_`, then a 16-hex-digit instance identifier
    // or `local` and `_` (v3; v2 has neither), then 40 hex digits.
    Format {
        vendor: "Sourcegraph",
        kind: "access token",
        doc: "https://docs.sourcegraph.com/dev/security/secret_formats",
        triggers: &["sgp_"],
        pattern: r"sgp_(?:(?:[0-9a-fA-F]{16}|local)_)?[0-9a-fA-F]{40}\b",
        sample: "sgp_{hex:16}_{hex:40}",
        near_miss: "sgp_{hex:20}",
        ..Format::ROW
    },
    // Same page: the backend tokens, each a prefix and 64 hex digits.
    Format {
        vendor: "Sourcegraph",
        kind: "gateway, license or subscription token",
        doc: "https://docs.sourcegraph.com/dev/security/secret_formats",
        triggers: &["sgd_", "slk_", "sgs_"],
        pattern: r"(?:sgd|slk|sgs)_[0-9a-fA-F]{64}\b",
        sample: "sgs_{hex:64}",
        near_miss: "slk_{hex:32}",
        ..Format::ROW
    },
    // Evidence, from GitHub's announcement (GitHub runs npm): "npm access tokens will now
    // follow the same format of GitHub authentication tokens"; they "start with an
    // identifiable prefix: npm" and the delimiter is "an underscore _"; "we increased our
    // entropy from 128 to 178"; "The last six characters of the tokens consist of CRC32
    // checksum, which is encoded in our Base62 implementation." The page gives no example
    // and no length; the length follows from the entropy: a Base62 character carries 5.95
    // bits, so 178 bits are 30 random characters (30 give 178.6, 29 only 172.7), and the
    // checksum adds 6: 36 letters and digits after `npm_`.
    // Provenance checked on 2026-12-05 with the docs search: the post (now at
    // github.blog/security/announcing-npms-new-access-token-format) holds each quoted
    // phrase word for word; it still gives no example and no length.
    Format {
        vendor: "npm",
        kind: "access token",
        doc: "https://github.blog/2021-09-23-announcing-npms-new-access-token-format",
        triggers: &["npm_"],
        pattern: r"npm_[A-Za-z0-9]{36}\b",
        sample: "npm_{b62:36}",
        near_miss: "npm_config_cache",
        ..Format::ROW
    },
    // PyPI's secret reporting page: `pypi-` and a base64url macaroon of at least 85
    // characters, with no upper bound.
    Format {
        vendor: "PyPI",
        kind: "API token",
        doc: "https://docs.pypi.org/api/secrets/",
        triggers: &["pypi-"],
        pattern: r"pypi-[A-Za-z0-9_\-]{85,}",
        sample: "pypi-{url:85}",
        near_miss: "pypi-{url:40}",
        ..Format::ROW
    },
    // Docker's API reference shows the prefix in its example (`dckr_pat_124509ugsdjga93`,
    // 15 characters after it) and no length; the body is at least that long, in the
    // base64url alphabet.
    Format {
        vendor: "Docker",
        kind: "Docker Hub personal access token",
        doc: "https://docs.docker.com/reference/api/hub/latest/operations/AuthCreateAccessToken.md",
        triggers: &["dckr_pat_"],
        pattern: r"dckr_pat_[A-Za-z0-9_\-]{15,}",
        sample: "dckr_pat_{an:15}",
        near_miss: "dckr_pat_{an:8}",
        ..Format::ROW
    },
    // Evidence, from JFrog's page on identity tokens: "reference tokens follow this
    // pattern: .*\bcmVmd[A-Za-z0-9]{59}\b.*, starting with cmVMd followed by 59 more
    // alphanumeric characters." (The sentence writes the prefix `cmVMd`, the page's own
    // pattern `cmVmd`; the pattern is taken.) So `cmVmd` and 59 letters and digits.
    // Provenance checked on 2026-12-05 with the docs search: the page holds "reference tokens
    // follow this pattern: .*\bcmVmd[A-Za-z0-9]{59}\b.*, starting with cmVMd followed by 59
    // more alphanumeric characters." word for word.
    Format {
        vendor: "JFrog",
        kind: "reference token",
        doc: "https://jfrog.com/help/r/jfrog-platform-administration-documentation/understanding-identity-tokens",
        triggers: &["cmVmd"],
        pattern: r"cmVmd[A-Za-z0-9]{59}\b",
        sample: "cmVmd{b62:59}",
        near_miss: "cmVmd{b62:30}",
        ..Format::ROW
    },
    // JetBrains' example `perm:cm9vdA==.dG9rZW4=.rNZ38ije7uiWwnUTRDdyFDdUkoPUPi`: the
    // login and the token name in base64, then 30 letters and digits, joined by dots.
    Format {
        vendor: "JetBrains",
        kind: "YouTrack or Hub permanent token",
        doc: "https://jetbrains.com/help/youtrack/devportal/authentication-with-permanent-token.html",
        triggers: &["perm:"],
        pattern: r"perm:[A-Za-z0-9+/]{2,}={0,2}\.[A-Za-z0-9+/]{2,}={0,2}\.[A-Za-z0-9]{30}\b",
        sample: "perm:{b64:8}.{b64:8}.{b62:30}",
        near_miss: "perm:{b64:8}.{b64:8}",
        ..Format::ROW
    },
];
