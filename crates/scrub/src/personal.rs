//! Removes personal data from text before it goes into a failure summary.
//!
//! This module owns the detection of data about people, as opposed to secrets (which
//! [`crate`] owns). Each detector reports byte ranges of the text; overlapping ranges
//! merge and each becomes one [`REDACTED`]; passes repeat until none matches, so redacting
//! twice changes nothing. All else stays byte-identical. A match never touches a letter,
//! digit, `_` or marker on either side. Rules:
//!
//! - E-mail: `local@domain` with a dotted domain whose last label is 2+ ASCII letters. Not
//!   URL userinfo (`://user@host`, left to `scrub`), not scp-style remotes
//!   (`git@github.com:org/repo`), not `user@localhost`, `pkg@1.2.3` or `@scope/pkg`.
//! - Card: 13–19 digits, either unbroken or in 3+ groups of 3–6 digits (the first of 4) joined
//!   by one repeated space or dash; the grouped form may be the start or end of a longer
//!   group run (`4111 1111 1111 1111 123`). The number must pass Luhn and start like a card
//!   network (3–6, or 2221–2720), which keeps out timestamps and epoch millis. Not next to
//!   `.` + digit (decimals).
//! - IBAN: upper-case country code of an IBAN country, 2 check digits, 11–30 alphanumerics,
//!   unbroken or in groups of 4 joined by single spaces; valid by ISO 13616 mod 97.
//! - Phone: `+` and 8–15 digits (spaces, dots, dashes, `(0)`, a parenthesised area code
//!   allowed; dots only with 3+ groups, so `+12.5` stays), or North American
//!   `(415) 555-2671`, `415-555-2671`, `415.555.2671` (area and exchange start 2–9). Bare
//!   digit runs never match.
//! - IP: IPv4 dotted quads and IPv6 (any form `std::net` parses; `[…]` brackets go too) that
//!   are globally routable. Kept: loopback, private, link-local, unspecified, CGNAT,
//!   benchmark, multicast, reserved and documentation ranges (192.0.2/24, 198.51.100/24,
//!   203.0.113/24, 2001:db8::/32, 3fff::/20). A dotted quad after `v`, `ver` or a word ending
//!   in `version` is a version number and stays; otherwise `1.2.3.4` is an IP.

use std::borrow::Cow;
use std::net::{Ipv4Addr, Ipv6Addr};
use std::ops::Range;
use std::sync::LazyLock;

use regex::Regex;

use super::marker::{self, Overlap, REDACTED};

fn compile(pattern: &str) -> Regex {
    Regex::new(pattern).expect("valid pattern")
}

/// Candidate e-mail: a maximal run of local-part characters, `@`, domain characters.
static EMAIL: LazyLock<Regex> =
    LazyLock::new(|| compile(r"[A-Za-z0-9._%+\-]+(?:@|%40)[A-Za-z0-9.\-]+"));

/// A maximal run of digit groups joined by single spaces or dashes.
static DIGIT_RUN: LazyLock<Regex> = LazyLock::new(|| compile(r"[0-9]+(?:[ \-][0-9]+)*"));

static IBAN: LazyLock<Regex> = LazyLock::new(|| {
    compile(r"[A-Z]{2}[0-9]{2}(?:[A-Z0-9]{11,30}|(?: [A-Z0-9]{4}){2,7}(?: [A-Z0-9]{1,4})?)")
});

/// A lower-case IBAN, unbroken or in groups of four: valid only at its country's length.
static IBAN_LOWER: LazyLock<Regex> = LazyLock::new(|| {
    compile(r"[a-z]{2}[0-9]{2}(?:[a-z0-9]{11,30}|(?: [a-z0-9]{4}){2,7}(?: [a-z0-9]{1,4})?)")
});

/// IBAN lengths of the countries whose IBANs turn up in lower case (ISO 13616 registry).
const IBAN_LENGTHS: &[(&str, usize)] = &[
    ("at", 20),
    ("be", 16),
    ("ch", 21),
    ("cz", 24),
    ("de", 22),
    ("dk", 18),
    ("es", 24),
    ("fi", 18),
    ("fr", 27),
    ("gb", 22),
    ("gr", 27),
    ("hr", 21),
    ("hu", 28),
    ("ie", 22),
    ("it", 27),
    ("li", 21),
    ("lt", 20),
    ("lu", 20),
    ("lv", 21),
    ("mt", 31),
    ("nl", 18),
    ("no", 15),
    ("pl", 28),
    ("pt", 25),
    ("ro", 24),
    ("se", 24),
    ("si", 19),
    ("sk", 24),
    ("bg", 22),
    ("cy", 28),
    ("ee", 20),
    ("is", 26),
    ("tr", 26),
    ("ua", 29),
    ("ae", 23),
    ("sa", 24),
    ("il", 23),
    ("br", 29),
];

/// A US social security or taxpayer number (`123-45-6789`, `12-3456789`) within a few
/// words after a word that names it.
static SSN: LazyLock<Regex> = LazyLock::new(|| {
    compile(concat!(
        r"(?i-u)\b(?:ssn|ss#|social[ _\-]security(?:[ _\-](?:number|no|#))?|itin|ein|tin|",
        r"tax(?:payer)?[ _\-]?(?:id|identification)(?:[ _\-](?:number|no))?|fein)\b",
        r#"[\s:=#"'(),.\-]{0,6}(?:[A-Za-z]+[\s:=#"'(),.\-]{1,4}){0,3}"#,
        r"([0-9]{3}-[0-9]{2}-[0-9]{4}|[0-9]{2}-[0-9]{7}|[0-9]{9})\b",
    ))
});

/// A phone number written without a country code (`020 7946 0958`, `06 12 34 56 78`,
/// `0049 30 1234567`): a `0`, 8 to 13 digits in groups. Only right after a word that names
/// a phone, since such digits are otherwise any number.
static PHONE_LOCAL: LazyLock<Regex> = LazyLock::new(|| {
    compile(concat!(
        r"(?i-u)\b(?:phone|tel|telephone|mobile|mob|cell|cellphone|fax|sms|whatsapp|call|",
        r"telefon|telefono|téléphone|portable|handy|rufnummer|numéro|número)\b",
        r#"[\s:=#"'.,()\-]{0,4}(?:(?:number|no|nr|num|to|at|on|is|via)\b[\s:=#"'.,()\-]{0,4}){0,2}"#,
        r"(\(?0[0-9]{1,4}\)?(?:[ .\-/]?[0-9]{2,8}){1,5})",
    ))
});

/// `+` country code, optional trunk `(0)`, then digit groups (one may be in parentheses).
static PHONE_INTL: LazyLock<Regex> = LazyLock::new(|| {
    compile(r"\+[1-9][0-9]{0,3}(?:[ .\-]?\(0\))?(?:[ .\-]?(?:\([0-9]{1,4}\)|[0-9]{1,6})){1,8}")
});

static PHONE_NANP: LazyLock<Regex> = LazyLock::new(|| {
    compile(concat!(
        r"\([2-9][0-9]{2}\) ?[2-9][0-9]{2}[\-. ][0-9]{4}",
        r"|(?:1-)?[2-9][0-9]{2}-[2-9][0-9]{2}-[0-9]{4}",
        r"|(?:1\.)?[2-9][0-9]{2}\.[2-9][0-9]{2}\.[0-9]{4}",
    ))
});

static IPV4: LazyLock<Regex> = LazyLock::new(|| compile(r"[0-9]{1,3}(?:\.[0-9]{1,3}){3}"));

/// A maximal run of hex digits, dots and colons with at least one colon.
static IPV6: LazyLock<Regex> = LazyLock::new(|| compile(r"[0-9A-Fa-f.]*:[0-9A-Fa-f.:]*"));

/// Countries that issue IBANs (ISO 13616 registry).
const IBAN_COUNTRIES: &str = "AD AE AL AT AZ BA BE BG BH BI BR BY CH CR CY CZ DE DJ DK DO EE EG \
     ES FI FK FO FR GB GE GI GL GR GT HN HR HU IE IL IQ IS IT JO KW KZ LB LC LI LT LU LV LY MC MD \
     ME MK MN MR MT MU NI NL NO OM PK PL PS PT QA RO RS RU SA SC SD SE SI SK SM SO ST SV TL TN TR \
     UA VA VG XK YE";

/// Replaces personal data in `text` with [`REDACTED`]: e-mail addresses, payment card
/// numbers (Luhn-valid), IBANs (mod-97-valid), phone numbers with real structure, and public
/// IPv4/IPv6 addresses.
pub fn redact(text: &str) -> Cow<'_, str> {
    let Some(mut out) = redact_once(text) else {
        return Cow::Borrowed(text);
    };
    // Something left alone for touching data that is now a marker may qualify on the redacted
    // text; repeat until nothing changes, so that redacting again is a no-op. No match covers
    // marker bytes, so each pass removes text and at most `text.len()` passes run.
    for _ in 0..text.len() {
        match redact_once(&out) {
            Some(next) => out = next,
            None => break,
        }
    }
    Cow::Owned(out)
}

/// One pass over `text`; `None` when nothing matched.
fn redact_once(text: &str) -> Option<String> {
    let mut spans = Vec::new();
    emails(text, &mut spans);
    cards(text, &mut spans);
    ibans(text, &mut spans);
    phones(text, &mut spans);
    context_numbers(text, &mut spans);
    ipv4s(text, &mut spans);
    ipv6s(text, &mut spans);
    if spans.is_empty() {
        return None;
    }
    spans.sort_by_key(|r| (r.start, std::cmp::Reverse(r.end)));
    let spans: Vec<(usize, usize)> = spans.into_iter().map(|r| (r.start, r.end)).collect();
    // An overlapping span extends the marker already written.
    Some(marker::splice(text, &spans, Overlap::Merge).into_owned())
}

fn char_before(text: &str, i: usize) -> Option<char> {
    text[..i].chars().next_back()
}

fn char_after(text: &str, i: usize) -> Option<char> {
    text[i..].chars().next()
}

/// Whether `c` joins a word: an ASCII letter or digit, or `_`.
///
/// Only ASCII letters and digits join a word here: e-mail addresses, card and phone numbers
/// are ASCII, and a letter of another script beside one is a word boundary, as Unicode's
/// word breaking has it (CJK text has no spaces: `用户jane.doe@example.com不存在`).
fn is_word(c: Option<char>) -> bool {
    c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// A letter, digit, `_` or [`REDACTED`] (which stood for such data) ends `text[..i]`.
fn word_before(text: &str, i: usize) -> bool {
    is_word(char_before(text, i)) || text[..i].ends_with(REDACTED)
}

/// A letter, digit, `_` or [`REDACTED`] starts `text[i..]`.
fn word_after(text: &str, i: usize) -> bool {
    is_word(char_after(text, i)) || text[i..].starts_with(REDACTED)
}

/// `text[..i]` ends with one of `seps` right after a digit (or a marker).
fn digit_sep_before(text: &str, i: usize, seps: &[char]) -> bool {
    let head = &text[..i];
    let Some(sep) = head.chars().next_back().filter(|c| seps.contains(c)) else {
        return false;
    };
    let head = &head[..head.len() - sep.len_utf8()];
    head.ends_with(|c: char| c.is_ascii_digit()) || head.ends_with(REDACTED)
}

/// `text[i..]` starts with one of `seps` followed by a digit (or a marker).
fn digit_sep_after(text: &str, i: usize, seps: &[char]) -> bool {
    let tail = &text[i..];
    let Some(sep) = tail.chars().next().filter(|c| seps.contains(c)) else {
        return false;
    };
    let tail = &tail[sep.len_utf8()..];
    tail.starts_with(|c: char| c.is_ascii_digit()) || tail.starts_with(REDACTED)
}

/// Runs `re` over `text` and keeps what `accept` returns. A rejected candidate is retried one
/// character later, so that a valid match starting inside it is still found; the patterns
/// used here have bounded length, which keeps this linear.
fn scan(
    re: &Regex,
    text: &str,
    spans: &mut Vec<Range<usize>>,
    accept: impl Fn(Range<usize>) -> Option<Range<usize>>,
) {
    let mut pos = 0;
    while pos < text.len() {
        let Some(m) = re.find_at(text, pos) else {
            break;
        };
        match accept(m.range()) {
            Some(span) => {
                pos = span.end.max(m.start() + 1);
                spans.push(span);
            }
            None => pos = m.start() + char_after(text, m.start()).map_or(1, char::len_utf8),
        }
    }
}

fn emails(text: &str, spans: &mut Vec<Range<usize>>) {
    for m in EMAIL.find_iter(text) {
        let s = m.as_str();
        // Percent-encoded (`jane%40example.com`, in a URL or a form body) counts too.
        let (at, at_len) = match s.find('@') {
            Some(at) => (at, 1),
            None => match s.find("%40") {
                Some(at) => (at, 3),
                None => continue,
            },
        };
        let local = s[..at].trim_start_matches('.');
        let local = local.rsplit("%20").next().unwrap_or(local);
        let domain = s[at + at_len..].trim_end_matches(['.', '-']);
        let start = m.start() + at - local.len();
        let end = m.start() + at + at_len + domain.len();
        if local.is_empty() || !is_mail_domain(domain) || text[..start].ends_with("//") {
            continue;
        }
        if word_before(text, start) || word_after(text, end) {
            continue;
        }
        // `git@github.com:org/repo.git` is a remote, not a mailbox.
        if let Some(path) = text[end..].strip_prefix(':')
            && (path.starts_with(|c: char| c.is_ascii_alphabetic() || "/~_.".contains(c))
                || path.starts_with(REDACTED))
        {
            continue;
        }
        spans.push(start..end);
    }
}

fn is_mail_domain(domain: &str) -> bool {
    let labels: Vec<&str> = domain.split('.').collect();
    let tld = labels[labels.len() - 1];
    labels.len() >= 2
        && labels
            .iter()
            .all(|l| !l.is_empty() && l.len() <= 63 && !l.starts_with('-') && !l.ends_with('-'))
        && tld.len() >= 2
        && tld.bytes().all(|b| b.is_ascii_alphabetic())
        && !PRIVATE_TLDS.iter().any(|p| tld.eq_ignore_ascii_case(p))
}

/// Top-level names no public mailbox has: reserved for private networks and tests
/// (`.internal`, `.local`, `.lan`, `.localhost`, `.invalid`). `backup@backup.acme.internal`
/// in `ssh -p 2222 backup@backup.acme.internal` is a login on a host, not an address.
const PRIVATE_TLDS: &[&str] = &[
    "internal",
    "local",
    "localdomain",
    "localhost",
    "lan",
    "home",
    "corp",
    "intranet",
    "invalid",
];

fn cards(text: &str, spans: &mut Vec<Range<usize>>) {
    for m in DIGIT_RUN.find_iter(text) {
        let mut groups: Vec<Range<usize>> = Vec::new();
        let mut joins: Vec<u8> = Vec::new();
        let mut group_start = m.start();
        for (i, b) in m.as_str().bytes().enumerate() {
            if !b.is_ascii_digit() {
                groups.push(group_start..m.start() + i);
                joins.push(b);
                group_start = m.start() + i + 1;
            }
        }
        groups.push(group_start..m.end());
        let n = groups.len();
        // A group touching a letter or a decimal point belongs to something else. (A space
        // or dash next to a digit only shows up here next to a marker, which stood for the
        // rest of this run.)
        let seps = ['.', ' ', '-'];
        let first_ok = !word_before(text, m.start()) && !digit_sep_before(text, m.start(), &seps);
        let last_ok = !word_after(text, m.end()) && !digit_sep_after(text, m.end(), &seps);
        let usable = |i: usize| (i > 0 || first_ok) && (i + 1 < n || last_ok);

        if n == 1 && names_a_count(&text[..m.start()]) {
            continue;
        }
        for (i, g) in groups.iter().enumerate() {
            if usable(i) && is_card(&text[g.clone()]) {
                spans.push(g.clone());
            }
        }
        // Grouped forms: within each stretch joined by one kind of separator, the longest
        // valid window that starts or ends the stretch.
        let mut i = 0;
        while i + 1 < n {
            let mut j = i + 1;
            while j + 1 < n && joins[j] == joins[i] {
                j += 1;
            }
            let valid = |&(s, e): &(usize, usize)| grouped_card(text, &groups[s..=e], &usable, s);
            // A card has at most 19 digits and a group at least 3, so a window holds at
            // most MAX_GROUPS groups: only those windows are tried, which keeps a long run
            // of digit groups (a table of numbers) linear.
            let prefix = (i + 2..=j.min(i + MAX_GROUPS - 1))
                .rev()
                .map(|e| (i, e))
                .find(valid);
            let suffix = (j.saturating_sub(MAX_GROUPS - 1).max(i + 1)..=j.saturating_sub(2))
                .map(|s| (s, j))
                .find(valid);
            for (s, e) in prefix.into_iter().chain(suffix) {
                spans.push(groups[s].start..groups[e].end);
            }
            i = j;
        }
    }
}

/// Last parts of names whose values are counts, sizes, times or ids, not card numbers
/// (`bytes_written=4539148803436467`).
const COUNT_NAMES: &[&str] = &[
    "bytes",
    "written",
    "read",
    "size",
    "count",
    "total",
    "offset",
    "seq",
    "sequence",
    "ts",
    "timestamp",
    "time",
    "ms",
    "us",
    "ns",
    "duration",
    "elapsed",
    "len",
    "length",
    "id",
    "pid",
    "uid",
    "gid",
    "inode",
    "blocks",
    "rows",
    "records",
    "lsn",
    "xid",
    "txid",
    "epoch",
    "nanos",
    "millis",
    "micros",
    "sent",
    "received",
    "used",
    "free",
    "avail",
    "limit",
    "max",
    "min",
];

/// `text` ends with `name=`, `name: ` or `"name": ` where the name's last part is a count's.
fn names_a_count(head: &str) -> bool {
    let head = head.trim_end_matches([' ', '"', '\'']);
    let Some(head) = head.strip_suffix(['=', ':']) else {
        return false;
    };
    let head = head.trim_end_matches([' ', '"', '\'']);
    let name = head
        .rsplit(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.'))
        .next()
        .unwrap_or("");
    let last = name
        .rsplit(['_', '-', '.'])
        .next()
        .unwrap_or("")
        .to_ascii_lowercase();
    COUNT_NAMES.contains(&last.as_str())
}

/// The most groups a grouped card number can have: 19 digits in groups of 3 or more.
const MAX_GROUPS: usize = 6;

fn grouped_card(
    text: &str,
    groups: &[Range<usize>],
    usable: &impl Fn(usize) -> bool,
    offset: usize,
) -> bool {
    groups.len() >= 3
        && groups[0].len() == 4
        && groups.iter().all(|g| (3..=6).contains(&g.len()))
        && (offset..offset + groups.len()).all(usable)
        && is_card(&groups.iter().map(|g| &text[g.clone()]).collect::<String>())
}

fn is_card(digits: &str) -> bool {
    let network = match digits.as_bytes().first() {
        Some(b'3'..=b'6') => true,
        Some(b'2') => digits
            .get(..4)
            .and_then(|p| p.parse::<u32>().ok())
            .is_some_and(|p| (2221..=2720).contains(&p)),
        _ => false,
    };
    network && (13..=19).contains(&digits.len()) && luhn(digits)
}

fn luhn(digits: &str) -> bool {
    let mut sum = 0;
    for (i, b) in digits.bytes().rev().enumerate() {
        if !b.is_ascii_digit() {
            return false;
        }
        let d = u32::from(b - b'0');
        sum += if i % 2 == 1 {
            if d > 4 { d * 2 - 9 } else { d * 2 }
        } else {
            d
        };
    }
    sum % 10 == 0
}

fn ibans(text: &str, spans: &mut Vec<Range<usize>>) {
    lower_ibans(text, spans);
    scan(&IBAN, text, spans, |r| {
        let s = &text[r.clone()];
        if word_before(text, r.start) || !is_iban_country(&s[..2]) {
            return None;
        }
        longest_iban(text, r, |compact| {
            (15..=34).contains(&compact.len()) && iban_checksum(compact)
        })
    });
}

/// The longest IBAN at the start of the candidate `r`: the whole of it, then (grouped form)
/// shorter ones ending at a group, each judged by `valid` without its spaces.
fn longest_iban(text: &str, r: Range<usize>, valid: impl Fn(&str) -> bool) -> Option<Range<usize>> {
    let s = &text[r.clone()];
    let mut ends: Vec<usize> = s.match_indices(' ').map(|(i, _)| i).collect();
    ends.push(s.len());
    ends.into_iter()
        .rev()
        .filter(|&e| !word_after(text, r.start + e))
        .find(|&e| valid(&s[..e].chars().filter(|c| *c != ' ').collect::<String>()))
        .map(|e| r.start..r.start + e)
}

fn lower_ibans(text: &str, spans: &mut Vec<Range<usize>>) {
    scan(&IBAN_LOWER, text, spans, |r| {
        let s = &text[r.clone()];
        if word_before(text, r.start) {
            return None;
        }
        let want = IBAN_LENGTHS.iter().find(|(c, _)| *c == &s[..2])?.1;
        longest_iban(text, r, |compact| {
            compact.len() == want && iban_checksum(&compact.to_ascii_uppercase())
        })
    });
}

/// Numbers that are personal only next to their name: US SSN and TIN, phone numbers
/// without a country code.
fn context_numbers(text: &str, spans: &mut Vec<Range<usize>>) {
    for re in [&*SSN, &*PHONE_LOCAL] {
        for caps in re.captures_iter(text) {
            let Some(m) = caps.get(1) else { continue };
            let digits = m.as_str().bytes().filter(u8::is_ascii_digit).count();
            let phone = std::ptr::eq(re, &*PHONE_LOCAL);
            if phone && !(9..=14).contains(&digits) || !clear_after(text, m.end()) {
                continue;
            }
            spans.push(m.range());
        }
    }
}

fn is_iban_country(code: &str) -> bool {
    IBAN_COUNTRIES.split_whitespace().any(|c| c == code)
}

/// ISO 13616: the first four characters moved to the end, letters as 10–35, mod 97 is 1.
fn iban_checksum(iban: &str) -> bool {
    let (head, tail) = iban.split_at(4);
    let mut rem = 0u32;
    for c in tail.chars().chain(head.chars()) {
        let Some(v) = c.to_digit(36) else {
            return false;
        };
        rem = (if v < 10 { rem * 10 + v } else { rem * 100 + v }) % 97;
    }
    rem == 1
}

fn phones(text: &str, spans: &mut Vec<Range<usize>>) {
    scan(&PHONE_INTL, text, spans, |r| {
        let before = char_before(text, r.start);
        if word_before(text, r.start) || before == Some('+') || !clear_after(text, r.end) {
            return None;
        }
        let number = text[r.clone()].replace("(0)", "");
        let digits = number.bytes().filter(u8::is_ascii_digit).count();
        let groups = number
            .split(|c: char| !c.is_ascii_digit())
            .filter(|g| !g.is_empty());
        let decimal_like = number.contains('.') && groups.count() < 3;
        ((8..=15).contains(&digits) && !decimal_like).then_some(r)
    });
    scan(&PHONE_NANP, text, spans, |r| {
        let clear_before =
            !word_before(text, r.start) && !digit_sep_before(text, r.start, &['-', '.', ':', '/']);
        (clear_before && clear_after(text, r.end)).then_some(r)
    });
}

/// Nothing after `i` continues the number: no letter or digit, no `-`/`.`/`:`/`/` + digit.
fn clear_after(text: &str, i: usize) -> bool {
    !word_after(text, i) && !digit_sep_after(text, i, &['-', '.', ':', '/'])
}

fn ipv4s(text: &str, spans: &mut Vec<Range<usize>>) {
    scan(&IPV4, text, spans, |r| {
        let before = char_before(text, r.start);
        if word_before(text, r.start) || before == Some('.') {
            return None;
        }
        if word_after(text, r.end) || digit_sep_after(text, r.end, &['.']) {
            return None;
        }
        let ip: Ipv4Addr = text[r.clone()].parse().ok()?;
        (is_public_v4(ip) && !after_version_word(text, r.start)).then_some(r)
    });
}

/// `version 1.2.3.4`, `Version: 1.2.3.4`, `app_version=1.2.3.4`, `v 1.2.3.4`.
fn after_version_word(text: &str, start: usize) -> bool {
    let head = text[..start].trim_end_matches([' ', '\t', ':', '=', '-']);
    let word = head
        .rsplit(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .next()
        .unwrap_or("")
        .to_ascii_lowercase();
    word == "v" || word == "ver" || word.ends_with("version")
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    let special = a == 0
        || a == 10
        || a == 127
        || a >= 224 // multicast, reserved, broadcast
        || (a == 100 && (64..128).contains(&b)) // CGNAT
        || (a == 169 && b == 254)
        || (a == 172 && (16..32).contains(&b))
        || (a == 192 && b == 168)
        || (a == 192 && b == 0 && (c == 0 || c == 2)) // protocol assignments, TEST-NET-1
        || (a == 198 && (b == 18 || b == 19)) // benchmarking
        || (a == 198 && b == 51 && c == 100) // TEST-NET-2
        || (a == 203 && b == 0 && c == 113); // TEST-NET-3
    !special
}

fn is_public_v6(ip: Ipv6Addr) -> bool {
    if let Some(v4) = ip.to_ipv4_mapped() {
        return is_public_v4(v4);
    }
    let s = ip.segments();
    if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        // NAT64: the last 32 bits are an IPv4 address.
        let [a, b] = s[6].to_be_bytes();
        let [c, d] = s[7].to_be_bytes();
        return is_public_v4(Ipv4Addr::new(a, b, c, d));
    }
    let global_unicast = s[0] & 0xe000 == 0x2000;
    let documentation = (s[0] == 0x2001 && s[1] == 0x0db8) || (s[0] == 0x3fff && s[1] < 0x1000);
    global_unicast && !documentation
}

fn ipv6s(text: &str, spans: &mut Vec<Range<usize>>) {
    for m in IPV6.find_iter(text) {
        // Punctuation around the address (`addr:2606::1`, `at 2606::1.`) is not part of it.
        let mut s = m.as_str().trim_end_matches('.');
        if s.ends_with(':') && !s.ends_with("::") {
            s = &s[..s.len() - 1];
        }
        let mut start = m.start();
        if s.starts_with(':') && !s.starts_with("::") {
            s = &s[1..];
            start += 1;
        }
        let end = start + s.len();
        if word_before(text, start) || word_after(text, end) {
            continue;
        }
        if !s.parse::<Ipv6Addr>().is_ok_and(is_public_v6) {
            continue;
        }
        let bracketed = char_before(text, start) == Some('[') && char_after(text, end) == Some(']');
        spans.push(if bracketed {
            start - 1..end + 1
        } else {
            start..end
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_redacted(input: &str, expected: &str) {
        let out = redact(input);
        assert_eq!(out, expected, "input: {input:?}");
        assert!(out.contains(REDACTED), "input: {input:?}");
    }

    fn assert_kept(input: &str) {
        assert!(
            matches!(redact(input), Cow::Borrowed(s) if s == input),
            "changed: {input:?} -> {:?}",
            redact(input)
        );
    }

    #[test]
    fn emails_redacted() {
        assert_redacted(
            "send to jane.doe+tag@example.co.uk failed",
            "send to [REDACTED] failed",
        );
        assert_redacted("From: <ops@example.com>", "From: <[REDACTED]>");
        assert_redacted("mailto:Jane.Doe@Example.COM.", "mailto:[REDACTED].");
        assert_redacted(
            "a@example.org,b_c@mail.example.net",
            "[REDACTED],[REDACTED]",
        );
        assert_redacted(
            "bounce jane@example.com:550 no such user",
            "bounce [REDACTED]:550 no such user",
        );
        assert_redacted("user=\"jane@example.com\"", "user=\"[REDACTED]\"");
        // Scripts without spaces between words, and full-width punctuation.
        assert_redacted("用户jane.doe@example.com不存在", "用户[REDACTED]不存在");
        // A login on a host of a private network is no mailbox.
        let ssh = "+ ssh -p 2222 backup@backup.acme.internal";
        assert_eq!(redact(ssh), ssh);
        assert_redacted("連絡先：ops@example.jp。", "連絡先：[REDACTED]。");
        assert_redacted("電話+81 90 1234 5678まで", "電話[REDACTED]まで");
    }

    #[test]
    fn emails_kept() {
        for text in [
            "fatal: could not read from git@github.com:org/repo.git",
            "npm ERR! 404 @scope/pkg@1.2.3 not found",
            "ssh user@localhost failed",
            "installing pkg@1.2.3 and lodash@4.17.21",
            "go: golang.org/x/net@v0.17.0: invalid version",
            "pull image@sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
            "clone https://jane@example.com/org/repo failed",
            "a@b.T is a matrix product",
            "decorator @app.route",
        ] {
            assert_kept(text);
        }
    }

    #[test]
    fn cards_redacted() {
        for (input, expected) in [
            (
                "card 4111 1111 1111 1111 declined",
                "card [REDACTED] declined",
            ),
            (
                "card 4111-1111-1111-1111 declined",
                "card [REDACTED] declined",
            ),
            ("pan=4111111111111111;", "pan=[REDACTED];"),
            ("amex 378282246310005", "amex [REDACTED]"),
            ("amex 3782 822463 10005", "amex [REDACTED]"),
            ("mc 5555 5555 5555 4444", "mc [REDACTED]"),
            ("4111 1111 1111 1111 123", "[REDACTED] 123"),
            ("exp 12 27 4111 1111 1111 1111", "exp 12 27 [REDACTED]"),
            ("2026-11-29 4111111111111111", "2026-11-29 [REDACTED]"),
        ] {
            assert_redacted(input, expected);
        }
    }

    #[test]
    fn cards_kept() {
        for text in [
            "card 4111 1111 1111 1112 declined",
            "card 4111111111111112",
            "ts 20261129153000123",
            "at 1764428733123 ms",
            "at 1764428733123456789 ns",
            "order a4111111111111111",
            "order 4111111111111111b",
            "ratio 0.4111111111111111",
            "id 4111 111111111111",
            "ports 5432 6379 8080 9090",
        ] {
            assert_kept(text);
        }
    }

    #[test]
    fn ibans_redacted() {
        for (input, expected) in [
            (
                "iban DE89 3704 0044 0532 0130 00 EUR",
                "iban [REDACTED] EUR",
            ),
            ("iban=DE89370400440532013000", "iban=[REDACTED]"),
            ("to GB82 WEST 1234 5698 7654 32.", "to [REDACTED]."),
            ("GB82WEST12345698765432", "[REDACTED]"),
            ("BE68 5390 0754 7034 SENT", "[REDACTED] SENT"),
        ] {
            assert_redacted(input, expected);
        }
    }

    #[test]
    fn ibans_kept() {
        for text in [
            "iban DE89 3704 0044 0532 0130 01",
            "DE89370400440532013001",
            "XX89370400440532013000",
            "XDE89370400440532013000",
            "de89370400440532013001",
            "de8937040044053201300",
            "key AKIAIOSFODNN7EXAMPLE",
        ] {
            assert_kept(text);
        }
    }

    #[test]
    fn lower_case_ibans_redacted_at_their_length() {
        assert_redacted("iban de89370400440532013000 sent", "iban [REDACTED] sent");
        assert_redacted("to gb82 west 1234 5698 7654 32", "to [REDACTED]");
    }

    #[test]
    fn numbers_named_as_personal() {
        for (input, expected) in [
            ("ssn 123-45-6789 rejected", "ssn [REDACTED] rejected"),
            ("SSN: 123456789", "SSN: [REDACTED]"),
            (
                "taxpayer id for jane is 12-3456789",
                "taxpayer id for jane is [REDACTED]",
            ),
            ("phone: 020 7946 0958", "phone: [REDACTED]"),
            ("tel. 06 12 34 56 78 busy", "tel. [REDACTED] busy"),
            ("Telefon 030 1234567", "Telefon [REDACTED]"),
            ("sms to 0049 30 1234567 failed", "sms to [REDACTED] failed"),
        ] {
            assert_redacted(input, expected);
        }
        for text in [
            "order 123-45-6789 shipped",
            "tin can 12 of 30",
            "call 0 failed",
            "phone 12345",
            "row 020 7946 0958",
        ] {
            assert_kept(text);
        }
    }

    #[test]
    fn counts_are_not_cards() {
        assert_kept("bytes_written=4539148803436467");
        assert_kept("{\"total_bytes\": 4539148803436467}");
        assert_redacted("card=4539148803436467", "card=[REDACTED]");
    }

    #[test]
    fn percent_encoded_emails() {
        assert_redacted(
            "GET /invite?to=jane%40example.com&x=1",
            "GET /invite?to=[REDACTED]&x=1",
        );
        assert_redacted("to=jane.doe%2Bops%40example.co.uk", "to=[REDACTED]");
    }

    #[test]
    fn phones_redacted() {
        for (input, expected) in [
            ("call +14155552671 now", "call [REDACTED] now"),
            ("tel:+44 20 7946 0958", "tel:[REDACTED]"),
            ("+49 (0)30 123456 busy", "[REDACTED] busy"),
            ("+1 (415) 555-2671", "[REDACTED]"),
            ("(415) 555-2671", "[REDACTED]"),
            ("phone: 415-555-2671.", "phone: [REDACTED]."),
            ("415.555.2671", "[REDACTED]"),
            ("1-415-555-2671", "[REDACTED]"),
        ] {
            assert_redacted(input, expected);
        }
    }

    #[test]
    fn phones_kept() {
        for text in [
            "id 1234567890",
            "2026-11-29 14:05:33",
            "at 14:05:33.123",
            "version 1.2.3, build 10.0.19045.3693",
            "listening on 80, 443, 8080",
            "took 1.234567s (1m30s)",
            "main.go:123:45: undefined",
            "wrote 1048576 bytes",
            "0xdeadbeef4155552671",
            "delta +12345.678901",
            "1.0.0+20130313144700",
            "call 123-456-7890",
            "x+12345678",
            "2026-11-29T14:05:33+01:00",
            "415-555-2671-9",
        ] {
            assert_kept(text);
        }
    }

    #[test]
    fn public_ips_redacted() {
        for (input, expected) in [
            ("from 8.8.8.8 denied", "from [REDACTED] denied"),
            (
                "dial tcp 8.8.8.8:53: timeout",
                "dial tcp [REDACTED]:53: timeout",
            ),
            ("peer 1.2.3.4", "peer [REDACTED]"),
            ("host 2606:4700::1111 down", "host [REDACTED] down"),
            ("dial [2606:4700::1111]:443", "dial [REDACTED]:443"),
            ("addr=::ffff:8.8.8.8", "addr=[REDACTED]"),
            ("src 2606:4700::1111.", "src [REDACTED]."),
            ("ip:2606:4700::1111", "ip:[REDACTED]"),
            ("nat64 64:ff9b::808:808", "nat64 [REDACTED]"),
        ] {
            assert_redacted(input, expected);
        }
    }

    #[test]
    fn private_ips_and_lookalikes_kept() {
        for text in [
            "127.0.0.1",
            "connect 10.0.0.5:5432 refused",
            "192.168.1.1 172.16.0.1 169.254.169.254 100.64.0.1 0.0.0.0",
            "203.0.113.7 198.51.100.1 192.0.2.1 224.0.0.251 255.255.255.0",
            "::1 :: fe80::1%eth0 fd00::1 ::ffff:10.0.0.1",
            "dial [2001:db8::1]:443",
            "version 1.2.3.4",
            "Version: 1.2.3.4",
            "v1.2.3.4",
            "app_version=1.2.3.4",
            "1.2.3.4.5",
            "01.2.3.4",
            "mac 00:1a:2b:3c:4d:5e",
            "at 12:34:56",
            "std::vector and crate::scrub::REDACTED",
            "localhost:8080",
        ] {
            assert_kept(text);
        }
    }

    #[test]
    fn diagnostics_kept() {
        for text in [
            "commit 3f786850e387550fdab836ed7e6dc881de23001b",
            "sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
            "request 550e8400-e29b-41d4-a716-446655440000",
            "at 2026-11-29T14:05:33.123Z",
            "HTTP/1.1 404 Not Found",
            "ValueError: row 17 of 20000",
            "exit status 137",
            "semver 1.2.3 and v1.2.3-rc.1+build.5",
            "already [REDACTED] here",
            "",
        ] {
            assert_kept(text);
        }
    }

    #[test]
    fn mixed_line() {
        assert_redacted(
            "user jane@example.com (+44 20 7946 0958) from 8.8.8.8 paid 4111 1111 1111 1111 in 1.2s",
            "user [REDACTED] ([REDACTED]) from [REDACTED] paid [REDACTED] in 1.2s",
        );
    }

    /// Data glued into a long chain is redacted in at most two passes, not one per item.
    #[test]
    fn chains_settle_quickly() {
        for unit in [
            "4111 1111 1111 1111 ",
            "jane@example.com:",
            "(415) 555-2671",
            "+44 20 7946 0958jane@example.com",
            "8.8.8.8:2606:4700::1111:",
        ] {
            let mut text = unit.repeat(200);
            let mut passes = 0;
            while let Some(next) = redact_once(&text) {
                text = next;
                passes += 1;
            }
            assert!(passes <= 2, "{unit:?}: {passes} passes");
        }
    }

    /// Pieces to glue into random lines: personal data, look-alikes and separators.
    const PIECES: &[&str] = &[
        "jane@example.com",
        "4111 1111 1111 1111",
        "4111111111111111",
        "DE89 3704 0044 0532 0130 00",
        "+44 20 7946 0958",
        "(415) 555-2671",
        "415.555.2671",
        "8.8.8.8",
        "2606:4700::1111",
        "[2606:4700::1111]",
        "10.0.0.5:5432",
        "1.2.3",
        "version",
        "[REDACTED]",
        "12:34:56",
        "2026-11-29",
        "é",
        "git@github.com:o/r",
        " ",
        "-",
        ".",
        ":",
        "+",
        "@",
        "(",
        ")",
        "[",
        "]",
        "0",
        "7",
        "a",
        "Z",
        "_",
        "/",
        ",",
        "v",
        "::",
        "ffff",
        "(0)",
        "GB82",
        "+1 ",
        "5555 5555 5555 4444",
        "1-415-555-2671",
        "1.2.3.4",
    ];

    #[test]
    fn idempotent_bounded_and_panic_free() {
        let mut rng = fastrand::Rng::with_seed(7);
        for _ in 0..20_000 {
            let line: String = (0..rng.usize(1..8))
                .map(|_| PIECES[rng.usize(..PIECES.len())])
                .collect();
            let once = redact(&line);
            assert_eq!(redact(&once), once, "input: {line:?}");
            let replacements = once.matches(REDACTED).count();
            assert!(once.len() <= line.len() + replacements * REDACTED.len());
        }
        for _ in 0..2_000 {
            let bytes: Vec<u8> = (0..rng.usize(..64)).map(|_| rng.u8(..)).collect();
            let _ = redact(&String::from_utf8_lossy(&bytes));
        }
    }
}
