//! Reads the real-program corpus (tests/corpus/programs/cases.txt) and its known-misses file
//! (missed.txt). Both formats are described at the top of their files; this is the reader
//! that reverses the corpus's escapes back to the bytes the programs printed.

use std::collections::BTreeMap;

/// One program's failure: what it printed and the credentials it had in play.
pub struct Case {
    pub id: String,
    pub program: String,
    /// `(name, value)`: the name says which credential and in which form it was printed.
    pub secrets: Vec<(String, String)>,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

/// The cases of `text`, in file order. Panics naming the line on anything malformed: the
/// file is generated, so a malformed one is a bug to see, not to skip.
pub fn parse_cases(text: &str) -> Vec<Case> {
    let mut cases = Vec::new();
    let mut lines = text.split('\n').enumerate().peekable();
    // The header: comments and blank lines before the first case.
    while let Some((_, line)) = lines.peek() {
        if line.starts_with("=== ") {
            break;
        }
        assert!(
            line.is_empty() || line.starts_with('#'),
            "corpus header: {line:?}"
        );
        lines.next();
    }
    while let Some((n, line)) = lines.next() {
        if line.is_empty() {
            continue;
        }
        let id = line
            .strip_prefix("=== ")
            .unwrap_or_else(|| panic!("corpus line {}: expected `=== <id>`", n + 1));
        let mut case = Case {
            id: id.to_owned(),
            program: String::new(),
            secrets: Vec::new(),
            stdout: Vec::new(),
            stderr: Vec::new(),
        };
        // The block being read: its field name and its lines so far.
        let mut block: Option<(String, Vec<Vec<u8>>)> = None;
        while let Some((n, line)) = lines.next_if(|(_, l)| !l.starts_with("=== ")) {
            if let Some(text) = line.strip_prefix('|') {
                let (_, block_lines) = block
                    .as_mut()
                    .unwrap_or_else(|| panic!("corpus line {}: `|` outside a block", n + 1));
                block_lines.push(unescape(text, n));
                continue;
            }
            finish(&mut case, block.take());
            if line.is_empty() {
                continue;
            }
            let (key, value) = line
                .split_once(':')
                .unwrap_or_else(|| panic!("corpus line {}: expected `key: value`", n + 1));
            match key {
                "command" | "stdout" | "stderr" => block = Some((key.to_owned(), Vec::new())),
                "program" => case.program = value.trim().to_owned(),
                "exit" | "cut stdout" | "cut stderr" => {}
                _ => {
                    let name = key
                        .strip_prefix("secret ")
                        .unwrap_or_else(|| panic!("corpus line {}: unknown field {key:?}", n + 1));
                    let value = value.strip_prefix(' ').unwrap_or(value);
                    let value = String::from_utf8(unescape(value, n)).expect("a UTF-8 secret");
                    case.secrets.push((name.to_owned(), value));
                }
            }
        }
        finish(&mut case, block.take());
        assert!(!case.secrets.is_empty(), "case {} has no secret", case.id);
        cases.push(case);
    }
    cases
}

/// A block's text is its lines joined by newlines.
fn finish(case: &mut Case, block: Option<(String, Vec<Vec<u8>>)>) {
    let Some((name, lines)) = block else { return };
    let text = lines.join(&b'\n');
    match name.as_str() {
        "stdout" => case.stdout = text,
        "stderr" => case.stderr = text,
        _ => {}
    }
}

/// Reverses the corpus's escapes: `\\`, `\t`, `\r` and `\xNN` (one byte).
fn unescape(text: &str, line: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'\\' {
            out.push(bytes[i]);
            i += 1;
            continue;
        }
        match bytes.get(i + 1) {
            Some(b'\\') => out.push(b'\\'),
            Some(b't') => out.push(b'\t'),
            Some(b'r') => out.push(b'\r'),
            Some(b'x') => {
                let byte = text
                    .get(i + 2..i + 4)
                    .and_then(|hex| u8::from_str_radix(hex, 16).ok());
                out.push(byte.unwrap_or_else(|| bad_escape(text, line)));
                i += 2;
            }
            _ => bad_escape(text, line),
        }
        i += 2;
    }
    out
}

fn bad_escape(text: &str, line: usize) -> ! {
    panic!("corpus line {}: bad escape in {text:?}", line + 1)
}

/// Where a credential got out: `Summary` (and so the body too, which starts with it) or
/// only the `Body`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Leak {
    Summary,
    Body,
}

impl Leak {
    pub fn name(self) -> &'static str {
        match self {
            Leak::Summary => "summary",
            Leak::Body => "body",
        }
    }
}

/// A known miss: where it leaks and why.
pub struct Known {
    pub leak: Leak,
    pub reason: String,
}

/// The known misses, keyed by (case id, secret name). Lines are
/// `<case id> | <secret name> | summary|body | <reason>`; `#` starts a comment line.
pub fn parse_missed(text: &str) -> BTreeMap<(String, String), Known> {
    let mut missed = BTreeMap::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = line.splitn(4, " | ").collect();
        let [id, name, leak, reason] = fields[..] else {
            panic!("missed.txt line {}: expected four fields: {line:?}", n + 1)
        };
        let leak = match leak {
            "summary" => Leak::Summary,
            "body" => Leak::Body,
            _ => panic!(
                "missed.txt line {}: `summary` or `body`, not {leak:?}",
                n + 1
            ),
        };
        let key = (id.to_owned(), name.to_owned());
        let known = Known {
            leak,
            reason: reason.to_owned(),
        };
        assert!(
            missed.insert(key, known).is_none(),
            "missed.txt line {}: listed twice",
            n + 1
        );
    }
    missed
}
