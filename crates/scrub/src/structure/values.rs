//! Where a value ends, decided from how it is framed, so that a value goes whole however
//! much punctuation it holds (`P@ss!w0rd#2024$%^&*()`) and nothing after it goes along:
//!
//! - quoted (`"…"`, `'…'`, escaped JSON `\"…\"`, typographic `“…”`): at the closing quote,
//!   past quotes a backslash escapes and doubled quotes (`'it''s'`); `["…"]` is the string
//!   inside, a longer list goes whole;
//! - a YAML block scalar (`|`, `>-`): every line indented deeper than the name's; a YAML
//!   tag (`!!str`) is not part of the value;
//! - unquoted: at white space; at a quote or a closing bracket that the text before the name
//!   opened (`"password=…"`, `Config{password=…, host=db}`, `${db.password:…}`); at `,`,
//!   `;` or `&` when that separator also stands before the name (`a=1,password=…,b=2`, a
//!   query), or when white space or another `name=` follows it; at a shell's `&&`. Brackets the value opens
//!   are its own (`a(b)c`), and inside them blanks and commas do not end it when they close
//!   on the line (`auth=("user", "pw")`, `getpass("Password: ")`).
//!
//! A quote that closes the string the name stands in (`input("Password: ")`) leaves an
//! empty value. Limits: the framing is read from the start of the name's line, or on a long
//! line from [`REACH`] to `REACH + WINDOW_STEP` bytes before it (the names of a text are
//! read left to right, each byte about twice, `Framings`), and a
//! value's own brackets are looked for within as many after it; an unquoted value with a
//! blank in it (`password=two words`) goes up to the blank (but a YAML value runs to the
//! end of its line, and so do plain words to the line's end: `assignments`), and one with
//! `, ` in it up to
//! the comma; an apostrophe inside a word (`can't`) opens no quote, one after a blank does.
//!
//! The file is longer than most: the rules take its first 390 lines, and the framings are
//! many, so the tests beside them are long too.

use crate::text::{ceil_char_boundary, floor_char_boundary};

/// How far before a name, and after the start of a value, its framing is read: enough for
/// any line a person writes, and a bound on the work a long line of many names costs.
pub(super) const REACH: usize = 512;

/// The char boundary at most `reach` bytes before `i`.
pub(super) fn back(text: &str, i: usize, reach: usize) -> usize {
    ceil_char_boundary(text, i.saturating_sub(reach))
}

/// The char boundary at most `reach` bytes after `i`.
pub(super) fn ahead(text: &str, i: usize, reach: usize) -> usize {
    floor_char_boundary(text, i.saturating_add(reach))
}

/// Words that introduce the credential in an `Authorization` value.
const AUTH_SCHEMES: &[&str] = &[
    "bearer",
    "basic",
    "token",
    "digest",
    "negotiate",
    "bot",
    "apikey",
];

/// The value whose name starts at `name_start` and which starts at `start`, as a byte
/// range: inside its quotes when quoted (also in escaped JSON, `\"…\"`, and in a list of
/// one, `["…"]`), else as far as [`bare_end`] reads it. An authorization scheme word takes the
/// credential after it along.
/// `framings` reads the text's framings left to right (one for each text).
pub(super) fn value_span(
    framings: &mut Framings,
    text: &str,
    name_start: usize,
    start: usize,
) -> (usize, usize) {
    // A YAML tag (`password: !!str P@ss`) is not the value.
    let start = yaml_tag_end(text, start);
    if let Some(span) = yaml_block(text, name_start, start) {
        return span;
    }
    if let Some(span) = typographic_quotes(text, start) {
        return span;
    }
    let mut pos = start;
    let listed = text[pos..].starts_with('[') && text[pos + 1..].starts_with(['"', '\'', '\\']);
    if listed {
        pos += 1;
    }
    let escaped = text[pos..].starts_with("\\\"");
    if escaped {
        pos += 1;
    }
    let framing = framings.before(text, name_start);
    if let Some(quote) = text[pos..]
        .chars()
        .next()
        .filter(|c| *c == '"' || *c == '\'')
    {
        // `getpass("Password: ")`: the quote closes the string the name stands in, and
        // the value is empty. (`"password": "…"` closed its own quote after the name.)
        let closes_framing =
            framing.quote == Some(quote as u8) && !text[name_start..start].contains(quote);
        if closes_framing && !escaped && !listed {
            return (start, start);
        }
        let inner = pos + 1;
        let end = quoted_end(text, inner, quote as u8, escaped);
        // A list of more than one string (`["user", "pw"]`) goes whole, brackets and all.
        let closes_list = text[end..]
            .trim_start_matches(['"', '\'', '\\'])
            .starts_with(']');
        if !listed || closes_list {
            return (inner, end);
        }
    }
    let end = bare_end(text, &framing, start);
    if AUTH_SCHEMES
        .iter()
        .any(|scheme| text[start..end].eq_ignore_ascii_case(scheme))
    {
        let next = end + (text[end..].len() - text[end..].trim_start_matches([' ', '\t']).len());
        if next > end && next < text.len() {
            return (start, bare_end(text, &framing, next));
        }
    }
    (start, end)
}

/// A YAML block scalar (`password: |` or `>-`, then lines indented deeper than the name's):
/// from the first of those lines to the end of the last, so the secret goes whole however
/// many lines it takes.
fn yaml_block(text: &str, name_start: usize, at: usize) -> Option<(usize, usize)> {
    if !text[at..].starts_with(['|', '>']) {
        return None;
    }
    let line_end = |from: usize| text[from..].find('\n').map_or(text.len(), |n| from + n);
    let header = text[at..line_end(at)].trim_end();
    let indicator = header.strip_prefix(['|', '>'])?;
    if !indicator
        .trim_start_matches(['-', '+'])
        .trim_start_matches(|c: char| c.is_ascii_digit())
        .is_empty()
    {
        return None;
    }
    let floor = back(text, name_start, REACH);
    let line_start = text[floor..name_start]
        .rfind('\n')
        .map_or(floor, |n| floor + n + 1);
    let indent = |line: &str| line.len() - line.trim_start_matches([' ', '-']).len();
    let name_indent = indent(&text[line_start..name_start]);
    let (mut from, mut first, mut last) = (line_end(at), None, None);
    while from < text.len() {
        let start = from + 1;
        let end = line_end(start);
        let line = &text[start..end];
        if !line.trim().is_empty() {
            if indent(line) <= name_indent {
                break;
            }
            first.get_or_insert(start + indent(line));
            last = Some(end);
        }
        from = end;
    }
    // A block with no lines is empty.
    Some(first.zip(last).unwrap_or((at, at)))
}

/// Past a YAML core tag and its blank at `at` (`!!str `, `!!binary `).
fn yaml_tag_end(text: &str, at: usize) -> usize {
    let Some(rest) = text[at..].strip_prefix("!!") else {
        return at;
    };
    let tag = rest.bytes().take_while(u8::is_ascii_alphanumeric).count();
    match rest.as_bytes().get(tag) {
        Some(b' ' | b'\t') if tag > 0 => at + 2 + tag + 1,
        _ => at,
    }
}

/// A value in typographic quotes (`“…”`, `‘…’`, as chat and word processors write them):
/// inside them, up to the closing one on the line.
fn typographic_quotes(text: &str, at: usize) -> Option<(usize, usize)> {
    let (open, close) = [('“', '”'), ('‘', '’'), ('„', '“')]
        .into_iter()
        .find(|(open, _)| text[at..].starts_with(*open))?;
    let inner = at + open.len_utf8();
    let reach = ahead(text, inner, REACH);
    let line = text[inner..reach].find('\n').map_or(reach, |n| inner + n);
    let end = text[inner..line].find(close)?;
    Some((inner, inner + end))
}

/// What the text before a name on its line says about where an unquoted value after it
/// may end: brackets opened and not yet closed, a quote still open, and the separator
/// right before the name (`,` in `a=1,password=…`, `&` or `?` in a query).
pub(super) struct Framing {
    /// The closing brackets of brackets still open before the name.
    closers: Vec<u8>,
    /// A quote opened before the name and not closed.
    quote: Option<u8>,
    /// `,`, `;`, `&` or `?` when that stands right before the name.
    separator: Option<u8>,
    /// The open quote stands right before the name, so it holds the whole assignment
    /// (`export 'DB_PASSWORD=two words'`, as bash's xtrace writes it): blanks are part of
    /// the value, which ends at that quote.
    wraps_name: bool,
}

/// Bytes between the starts of the windows [`Framings`] reads: a name's framing is read
/// from the start of its line, or on a longer line from the last multiple of this at least
/// [`REACH`] bytes before the name (so between [`REACH`] and `REACH + WINDOW_STEP`).
const WINDOW_STEP: usize = REACH / 2;

/// The framings of the names of one text, read left to right: the brackets and quote open
/// at the last name read are carried on to the next in the same window, so every byte is
/// read about twice whatever the names' number (a line of `Pwd=a;` repeated, whose every
/// name read the 512 bytes before it, markers' brackets included, read each byte 85 times).
/// A name before the last one read, or in another window, is read afresh.
#[derive(Default)]
pub(super) struct Framings {
    /// The window the state below is for (its lowest start, a multiple of
    /// [`WINDOW_STEP`]), where it starts (after a line feed, or that start), and how far it
    /// has been read.
    floor: usize,
    start: usize,
    read: usize,
    /// The closing brackets of brackets open at `read`, and the quote open there.
    closers: Vec<u8>,
    quote: Option<u8>,
    /// Something has been read.
    primed: bool,
}

impl Framings {
    pub(super) fn before(&mut self, text: &str, name_start: usize) -> Framing {
        let floor = ceil_char_boundary(
            text,
            name_start.saturating_sub(REACH) / WINDOW_STEP * WINDOW_STEP,
        );
        let b = text.as_bytes();
        let same_window = self.primed && self.floor == floor && self.read <= name_start;
        let from = if same_window { self.read } else { floor };
        match text[from..name_start].rfind('\n') {
            Some(n) => self.restart(floor, from + n + 1),
            None if !same_window => self.restart(floor, floor),
            None => {}
        }
        self.read_to(b, name_start);
        let line = &b[self.start..name_start];
        let separator = line
            .iter()
            .rev()
            .find(|c| !matches!(c, b' ' | b'\t' | b'"' | b'\'' | b'\\'))
            .copied()
            .filter(|c| b",;&?".contains(c));
        // Read from the middle of a long line, the quotes' parity is unknown: no quote is
        // taken as open, so a value is never judged empty for a quote that may be none.
        let mid_line = self.start > 0 && b[self.start - 1] != b'\n';
        let quote = self.quote.filter(|_| !mid_line);
        Framing {
            closers: self.closers.clone(),
            quote,
            separator,
            wraps_name: quote.is_some() && line.last() == quote.as_ref(),
        }
    }

    /// A window from `floor` whose reading starts at `start`, nothing open.
    fn restart(&mut self, floor: usize, start: usize) {
        self.floor = floor;
        self.start = start;
        self.read = start;
        self.closers.clear();
        self.quote = None;
        self.primed = true;
    }

    /// Reads the brackets and quotes of `b[self.read..to]`.
    fn read_to(&mut self, b: &[u8], to: usize) {
        let mut i = self.read;
        while i < to {
            // Only quotes, backslashes and brackets change the framing: skip to the next.
            match b[i..to].iter().position(|&c| FRAMES[usize::from(c)]) {
                Some(n) => i += n,
                None => {
                    i = to;
                    break;
                }
            }
            match (self.quote, b[i]) {
                (Some(_), b'\\') => i += 1,
                (Some(q), c) if c == q => self.quote = None,
                (Some(_), _) => {}
                // An apostrophe inside a word (`can't`) opens nothing.
                (None, b'\'') if i > self.start && b[i - 1].is_ascii_alphanumeric() => {}
                (None, c @ (b'"' | b'\'')) => self.quote = Some(c),
                (None, b'(') => self.closers.push(b')'),
                (None, b'[') => self.closers.push(b']'),
                (None, b'{') => self.closers.push(b'}'),
                (None, c @ (b')' | b']' | b'}')) => {
                    if let Some(at) = self.closers.iter().rposition(|&x| x == c) {
                        self.closers.truncate(at);
                    }
                }
                _ => {}
            }
            i += 1;
        }
        self.read = i;
    }
}

/// The bytes [`Framing::before`] acts on: quotes, the backslash and brackets.
const FRAMES: [bool; 256] = {
    let mut table = [false; 256];
    let mut i = 0;
    let bytes = b"\"'\\()[]{}";
    while i < bytes.len() {
        table[bytes[i] as usize] = true;
        i += 1;
    }
    table
};

/// Where an unquoted value that starts at `from` ends, by its framing: at white space; at a
/// quote the framing opened; at a closing bracket the framing opened, once the value's own
/// brackets are closed (`Config{password=a(b)c, …}`); at `,`, `;` or `&` when that is the
/// framing's separator, when white space or the end follows it, or when another name and
/// `=` or `:` follow it. Anything else belongs to the value: `P@ss!w0rd#2024$%^&*()` goes
/// whole. Inside brackets the value opened (a tuple, list or map: `auth=("user", "pw")`, or
/// a call), blanks and separators do not end it when the bracket closes on the same line.
pub(super) fn bare_end(text: &str, framing: &Framing, from: usize) -> usize {
    let b = text.as_bytes();
    let mut own = Vec::new();
    // Inside the value's own brackets (`auth=("user", "pw")`, `vault.read("a", b="c d")`)
    // blanks and separators do not end it, if the bracket closes later on the line.
    // Whether a `)`, `]` or `}` closes later on the line: the next of each after the
    // last place asked about, looked for only when the value opens a bracket of its own
    // (so a value without one costs no look ahead), and each byte read once per value.
    let reach = ahead(text, from, REACH);
    let mut next_closers: [Option<Option<usize>>; 3] = [None; 3];
    let mut closes_later = |closer: u8, i: usize| {
        let k = match closer {
            b')' => 0,
            b']' => 1,
            _ => 2,
        };
        match next_closers[k] {
            Some(Some(p)) if p > i => return true,
            Some(None) => return false,
            _ => {}
        }
        let next = (i + 1..reach)
            .find(|&p| b[p] == closer || b[p] == b'\n')
            .filter(|&p| b[p] == closer);
        next_closers[k] = Some(next);
        next.is_some()
    };
    let mut i = from;
    while i < b.len() {
        let c = b[i];
        // A string inside the value's own brackets is part of it, whatever it holds:
        // `getpass("Password: ")`.
        if !own.is_empty()
            && matches!(c, b'"' | b'\'')
            && let Some((_, _, after)) = literal_at(text, i)
        {
            i = after;
            continue;
        }
        let inside = own.last().is_some_and(|&closer| closes_later(closer, i));
        let ends = match c {
            b'\n' => true,
            _ if inside && !matches!(c, b')' | b']' | b'}' | b'(' | b'[' | b'{') => false,
            c if c.is_ascii_whitespace() => !framing.wraps_name,
            b'"' | b'\'' => framing.quote == Some(c),
            b'(' | b'[' | b'{' => {
                own.push(closer(c));
                false
            }
            b')' | b']' | b'}' if own.last() == Some(&c) => {
                own.pop();
                false
            }
            b')' | b']' | b'}' => framing.closers.contains(&c),
            // CJK punctuation (`密码=…，请检查`): text without blanks goes on after it.
            0xE3 | 0xEF => cjk_stop(&text[i..]),
            // A shell's `&&` (`PGPASSWORD=…&&psql`): a command follows.
            b'&' if b.get(i + 1) == Some(&b'&') => true,
            b',' | b';' | b'&' => {
                framing.separator == Some(c)
                    || c == b'&' && framing.separator == Some(b'?')
                    || b.get(i + 1).is_none_or(u8::is_ascii_whitespace)
                    || names_next(&b[i + 1..])
            }
            _ => false,
        };
        if ends {
            return i;
        }
        i += 1;
    }
    b.len()
}

/// Whether `rest` starts with a CJK or fullwidth mark that ends a bare value: a comma,
/// full stop, colon, semicolon, closing bracket or quote, or the ideographic space.
fn cjk_stop(rest: &str) -> bool {
    rest.chars()
        .next()
        .is_some_and(|c| "，。、；：！？）」』】〉》\u{3000}".contains(c))
}

fn closer(open: u8) -> u8 {
    match open {
        b'(' => b')',
        b'[' => b']',
        _ => b'}',
    }
}

/// Whether `rest` starts with another name and its `=` or `:` (`user=…` after `&`), the
/// name perhaps quoted as JSON quotes it (`,"user":…`, `,\"user\":…`).
fn names_next(rest: &[u8]) -> bool {
    let quotes = |from: usize| {
        rest[from..]
            .iter()
            .take_while(|c| matches!(c, b'"' | b'\'' | b'\\'))
            .count()
    };
    let start = quotes(0);
    let name = rest[start..]
        .iter()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'-'))
        .count();
    let end = start + name;
    name > 0
        && rest[start].is_ascii_alphabetic()
        && matches!(rest.get(end + quotes(end)), Some(b'=' | b':'))
}

/// A string literal at `at` (`"…"`, `'…'` or `` `…` ``, with an optional Python prefix such
/// as `r` or `f`): the byte range inside its quotes, and where the literal ends. `None` if
/// no literal starts at `at` or it does not close on its line within 4 KiB.
pub(super) fn literal_at(text: &str, at: usize) -> Option<(usize, usize, usize)> {
    let b = text.as_bytes();
    let prefix = b[at..]
        .iter()
        .take(2)
        .take_while(|c| matches!(c, b'r' | b'b' | b'f' | b'u' | b'R' | b'B' | b'F' | b'U'))
        .count();
    let open = at + prefix;
    let quote = *b.get(open).filter(|c| matches!(c, b'"' | b'\'' | b'`'))?;
    let inner = open + 1;
    // A literal in code is short; a bound keeps a line of unclosed quotes linear.
    let scope = &text[..ahead(text, inner, 8 * REACH)];
    let close = quoted_end(scope, inner, quote, false);
    (b.get(close) == Some(&quote)).then_some((inner, close, close + 1))
}

/// Where a quoted value that starts at `inner` ends: at its closing `quote` (or the end of
/// the line), past quotes a backslash escapes (`"p\"ss"`, `'p\'ss'`) and doubled quotes
/// (`'it''s'`). In escaped JSON
/// (`escaped`: the value opened with `\"`), it closes at `\"`, and `\\\"` is a quote the
/// value holds.
pub(super) fn quoted_end(text: &str, inner: usize, quote: u8, escaped: bool) -> usize {
    let b = text.as_bytes();
    let mut i = inner;
    // In escaped JSON, whether the last character of the value was a backslash of its own.
    let mut held_backslash = false;
    while i < b.len() {
        match b[i] {
            b'\n' => return i,
            b'\\' if escaped => match b.get(i + 1) {
                Some(&c) if c == quote && !held_backslash => return i,
                Some(b'\\') => {
                    held_backslash = !held_backslash;
                    i += 2;
                }
                _ => {
                    held_backslash = false;
                    i += 2;
                }
            },
            b'\\' => i += 2,
            // A doubled quote is one the value holds (YAML `'it''s'`, SQL, connection strings).
            c if c == quote && !escaped && b.get(i + 1) == Some(&quote) => i += 2,
            c if c == quote && !escaped => return i,
            _ => {
                held_backslash = false;
                i += 1;
            }
        }
    }
    b.len()
}

#[cfg(test)]
mod tests {
    use super::super::redact;

    const PASSWORD: &str = "P@ss!w0rd#2024$%^&*()";

    /// Pieces of `secret` (any three characters in a row) that are still in `out`.
    fn survivors(secret: &str, out: &str) -> Vec<String> {
        let chars: Vec<char> = secret.chars().collect();
        chars
            .windows(3)
            .map(|w| w.iter().collect::<String>())
            .filter(|piece| out.contains(piece.as_str()))
            .collect()
    }

    #[test]
    fn a_punctuated_password_goes_whole_in_every_framing() {
        let framings = [
            ("password=", ""),
            ("password=", " next"),
            ("password=\"", "\" next"),
            ("password='", "'"),
            ("{\"password\": \"", "\", \"user\": \"bob\"}"),
            ("{\"password\":\"", "\"}"),
            ("password: ", ""),
            ("db:\n  password: ", "\n  user: bob"),
            ("password: '", "'"),
            ("Config{user=bob, password=", ", host=db}"),
            ("f(password=", ")"),
            ("--password=", " --user bob"),
            ("Server=db;Password=", ";User Id=sa"),
            ("Server=db;Password=\"", "\";User Id=sa"),
            ("${db.password:", "}"),
        ];
        for (before, after) in framings {
            let text = format!("{before}{PASSWORD}{after}");
            let out = redact(&text);
            assert_eq!(out, text.replace(PASSWORD, "[REDACTED]"), "{text}");
            assert!(survivors(PASSWORD, &out).is_empty(), "{text} -> {out}");
        }
    }

    #[test]
    fn an_unquoted_value_ends_at_the_separator_of_its_framing() {
        let cases = [
            ("a=1,password=x,y,b=2", "a=1,password=[REDACTED],y,b=2"),
            ("password=P@ss,w0rd", "password=[REDACTED]"),
            (
                "password=hunter2, user=bob",
                "password=[REDACTED], user=bob",
            ),
            ("[password=x,user=bob]", "[password=[REDACTED],user=bob]"),
            ("password=a&b", "password=[REDACTED]"),
            (
                "user=jane&password=x&remember=1",
                "user=jane&password=[REDACTED]&remember=1",
            ),
            ("password=x&user=bob", "password=[REDACTED]&user=bob"),
            (
                "(password=Zq8(x)w]Lm,2pe) next",
                "(password=[REDACTED]) next",
            ),
            ("password=Zq8(x)w]Lm,2pe next", "password=[REDACTED] next"),
            (
                "echo \"password=abc\" done",
                "echo \"password=[REDACTED]\" done",
            ),
            ("it can't: password=ab'cd", "it can't: password=[REDACTED]"),
            ("DB_PASSWD: s3cret; next", "DB_PASSWD: [REDACTED]; next"),
            (
                r#"{"session":x9y8,"user":"bob","secret":42,\"api_key\":k1,\"n\":1}"#,
                r#"{"session":[REDACTED],"user":"bob","secret":[REDACTED],\"api_key\":[REDACTED],\"n\":1}"#,
            ),
        ];
        for (text, want) in cases {
            assert_eq!(redact(text), want, "{text}");
        }
    }

    #[test]
    fn framing_is_read_near_the_name() {
        // A bracket opened more than `REACH + WINDOW_STEP` bytes before the name is not
        // seen.
        let far = format!(
            "({} password=x9)y x",
            "y".repeat(super::REACH + super::WINDOW_STEP)
        );
        assert!(redact(&far).ends_with(" password=[REDACTED] x"), "{far}");
        let near = format!("{}(password=x9) x", "y".repeat(super::REACH));
        assert!(redact(&near).ends_with("(password=[REDACTED]) x"), "{near}");
    }

    #[test]
    fn code_and_prompts_are_not_values() {
        for text in [
            r#"    password = getpass.getpass("Password: ")"#,
            r#"input('Enter token: ')"#,
            r#"token = vault.read("secret/data/app", field="token value")"#,
        ] {
            assert_eq!(redact(text), text);
        }
        assert_eq!(
            redact(r#"{"password": "x y", "prompt": "Password: "}"#),
            r#"{"password": "[REDACTED]", "prompt": "Password: "}"#
        );
    }

    #[test]
    fn quoted_tagged_and_block_values_end_where_their_quoting_says() {
        let cases = [
            ("password=“Zq8xw Lm2pe” next", "password=“[REDACTED]” next"),
            ("password: ‘Zq8xw Lm2pe’", "password: ‘[REDACTED]’"),
            // A YAML plain scalar runs to the end of its line.
            ("password: !!str P@ss!w0rd x", "password: !!str [REDACTED]"),
            ("password: !!binary", "password: [REDACTED]"),
            (
                "db:\n  password: |\n    P@ss!w0rd\n    #2024 x\n  user: app",
                "db:\n  password: |\n    [REDACTED]\n  user: app",
            ),
            (
                "password: >-\n  a b\n\n  c\nnext: 1",
                "password: >-\n  [REDACTED]\nnext: 1",
            ),
            ("password: |\nuser: app", "password: |\nuser: app"),
            ("password: 'it''s a s3cret' ok", "password: '[REDACTED]' ok"),
            (
                "password=\"a b, c; d\" next",
                "password=\"[REDACTED]\" next",
            ),
            (
                "{'password': '', 'user': 'x'}",
                "{'password': '', 'user': 'x'}",
            ),
        ];
        for (text, want) in cases {
            assert_eq!(redact(text), want, "{text}");
        }
    }
}
