//! Stack traces in the captured output, collapsed to the line that names the error.
//!
//! The failure summary's detail is the last non-empty line of the stderr tail. After a crash
//! that line is a frame (`at …`, `from …`, a goroutine's file line) or runtime chatter
//! (`Node.js v20.11.0`, `exit status 2`). [`collapse`] owns the rewrite that fixes this:
//! every trace it recognises becomes one line and all other lines stay byte-for-byte.
//!
//! - Python: `Traceback`, `  File` and source/caret lines and chained tracebacks go; the LAST
//!   exception line stays (what the program died of); for a group, its `| X: msg` line.
//! - Java, Kotlin, .NET (`\tat …`, `Caused by:`, ` ---> `, `... 5 more`, `--- End of …`):
//!   the FIRST error line stays: `Exception in thread …`, `Unhandled exception. …`, or the
//!   exception line a logged trace starts with. Ruby (`\tfrom …`), Perl Carp
//!   (`\t… called at …`) and Node.js (`    at …`) likewise keep the line above the frames;
//!   Node's source excerpt, `{ code: … }` block and `Node.js vX` go too.
//! - Go: `panic: …` / `fatal error: …` stays; goroutine dumps and `exit status N` go.
//! - Rust: a panic becomes `panicked: <message>` (the old one-line form stays as is); notes
//!   and backtraces go. anyhow's `Error: …` stays and its `Caused by:` list goes.
//! - PHP: `Fatal error:  Uncaught …` stays; `Stack trace:`, `#N …`, `thrown in …` go.
//!
//! - Hex dumps (`xxd`, `hexdump -C`, `od`, OpenLDAP's `ber_dump`, `tcpdump -X`; read in
//!   `hexdump`): a run of dump lines becomes `[hex dump]`, so neither its bytes nor its text
//!   column (which spells what the dump held) stand for the output.
//!
//! A tail may begin mid-trace: headless frames go (the first `Caused by:`-style line stays if
//! there is one), and so does the text's first line, likely a cut piece of a frame. A header
//! only counts with frames after it, so ordinary lines such as `Error: bad input` stay.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::Regex;

pub(crate) mod hexdump;

macro_rules! patterns {
    ($($name:ident = $re:expr;)*) => {$(
        static $name: LazyLock<Regex> =
            LazyLock::new(|| Regex::new($re).expect("valid pattern"));
    )*};
}

patterns! {
    // Frames of the `at` / `from` / `called at` kind and the lines standing for elided ones.
    FRAME = concat!(
        r"^\s+at [^\s(]+\([^()]*\)(?: in \S.*:line \d+)?(?: ~?\[[^\]]*\])?$",
        r"|^\s+at (?:async |new )?(?:[^()\s][^()]*? \((?:[^()]|\([^()]*\))*",
        r"(?::\d+|<anonymous>|index \d+|native)\)|\S+:\d+(?::\d+)?)(?: \{.*)?$",
        r"|^\tfrom \S.*:\d+(?::in .*)?$|^\t\S.* called at \S.* line \d+\.?$",
        r"|^\s+(?:\.\.\. \d+ (?:more|common frames omitted|levels\.\.\.",
        r"|lines? matching cause stack trace \.\.\.)|\(Coroutine boundary\))$",
    );
    CAUSE = r"^\s*(?:Caused by:|Suppressed:|--->) \S";
    SEPARATOR = r"^\s*--- End of .* ---$";
    // Lines that name an error and may have message lines before their frames.
    STRONG = concat!(
        r#"^Exception in thread "[^"]*" \S|^Unhandled [Ee]xception[.:] \S|^(?:\w+: )?Uncaught "#,
        r"|^(?:[A-Za-z_$][\w$]*\.)+[A-Za-z_$][\w$]*(?:Exception|Error|Throwable)(?::\s.*)?$",
        r"|^(?:[A-Z][\w$]*)?(?:Error|Exception)(?: \[[\w-]+\])?(?::\s.*)?$",
        r"| at \S+ line \d+(?:, <[^>]*> (?:line|chunk) \d+)?\.$|^\S+:\d+:in [`'][^`']*': .",
    );
    RUBY = r"^\S+:\d+:in [`'][^`']*': .";
    ERRORISH = r"^[A-Z][\w$.]*(?: \[[\w-]+\])?: \S";
    PY_FILE = r#"^  File "[^"]*", line \d+"#;
    PY_CARET = r"^\s+[~^]*\^[~^]*$";
    PY_GROUP = r"^\s*\+ Exception Group Traceback \(most recent call last\):$";
    PY_GROUP_LINE = r"^\s*\| (\S.*)$";
    PY_CHAIN = concat!(
        r"^(?:During handling of the above exception, another exception occurred",
        r"|The above exception was the direct cause of the following exception):$",
    );
    GO_PANIC = r"^(?:panic|fatal error): ";
    GO_ROUTINE = r"^goroutine \d+ (?:\S+ )*\[[^\]]*\]:$";
    GO_FILE = r"^\t\S.*:\d+(?: \+0x[0-9a-f]+)?$";
    GO_FILE_STRICT = r"^\t\S.*\.go:\d+(?: \+0x[0-9a-f]+)?$";
    GO_EXIT = r"^exit status \d+$";
    RUST_PANIC_OLD = r"^thread '.*' (?:\(\d+\) )?panicked at '";
    RUST_PANIC_NEW = r"^thread '.*' (?:\(\d+\) )?panicked at \S.*:\d+:\d+:$";
    RUST_ASSERT = r"^ {0,2}(?:left|right): ";
    RUST_TAIL = concat!(
        r"^(?:note: run with `RUST_BACKTRACE=|note: Some details are omitted",
        r"|[Ss]tack backtrace:$)",
    );
    // `{:>4}: ` as std prints it; anyhow's cause list is one column wider.
    RUST_NUMBERED = r"^(?: {3}\d| {2}\d{2}| \d{3}|\d{4,}):\s+(?:0x[0-9a-f]+ - )?\S";
    RUST_AT = r"^\s+at \S.*:\d+(?::\d+)?$";
    PHP_UNCAUGHT = r"^(?:\[[^\]]*\] )?(?:PHP )?Fatal error: +Uncaught \S";
    PHP_STACK = r"^(?:PHP )?Stack trace:$";
    PHP_FRAME = r"^(?:PHP )?#\d+ (?:\{main\}|\[internal function\]: |\S.*\(\d+\): )";
    PHP_THROWN = r"^(?:PHP )?\s+thrown in .+ on line \d+$";
    PHP_NEXT = r"^(?:PHP )?Next \S";
    NODE_EXCERPT = r"^\S+:\d+$";
    NODE_CARET = r"^\s*\^+$";
    NODE_VERSION = r"^Node\.js v\d+\.\d+\.\d+$";
}

const TRACEBACK: &str = "Traceback (most recent call last):";
/// Passes after the first: one settles nearly everything; more make the result a fixed point
/// even when a kept line meets new neighbours.
const EXTRA_PASSES: usize = 8;

/// Collapses every stack trace recognised in `text` to the single line that names the
/// error, leaving other lines as they are, so that the last non-empty line of the result
/// is the error rather than a frame.
///
/// Log prefixes and SQLAlchemy tails around a trace ([`super::wrappers`]) go first; the
/// prefixes only when a trace is then found, so ordinary prefixed lines stay as they are.
pub fn collapse(text: &str) -> Cow<'_, str> {
    if let Some(unwrapped) = super::wrappers::unwrap(text) {
        match collapse_plain(&unwrapped.text) {
            Cow::Owned(out) => return Cow::Owned(out),
            Cow::Borrowed(_) if unwrapped.cut_tail => return Cow::Owned(unwrapped.text),
            Cow::Borrowed(_) => {}
        }
    }
    collapse_plain(text)
}

fn collapse_plain(text: &str) -> Cow<'_, str> {
    let Some(mut out) = pass(text) else {
        return Cow::Borrowed(text);
    };
    for _ in 0..EXTRA_PASSES {
        let Some(next) = pass(&out) else { break };
        out = next;
    }
    Cow::Owned(out)
}

struct Line<'a> {
    /// The line as in the text, terminator included.
    full: &'a str,
    /// What a terminal shows last (the last non-blank `\r` part), without trailing blanks.
    vis: &'a str,
}

/// The line that stands for a trace: `Keep(k, at, prefix)` is `prefix` and then line `k`
/// from byte `at` on.
#[derive(Clone, Copy)]
struct Keep(usize, usize, &'static str);

fn kept(k: usize) -> Option<Keep> {
    Some(Keep(k, 0, ""))
}

/// A trace from the line where it was recognised up to `end`, of which only `keep` stays.
struct Block {
    end: usize,
    keep: Option<Keep>,
    /// Starts on a frame, not a header: what came before it may have been cut off.
    cut: bool,
}

fn found(end: usize, keep: Option<Keep>, cut: bool) -> Option<Block> {
    Some(Block { end, keep, cut })
}

/// One rewrite over `text`; `None` when it changes nothing.
fn pass(text: &str) -> Option<String> {
    let lines: Vec<Line> = text
        .split_inclusive('\n')
        .map(|full| {
            let content = full.strip_suffix('\n').unwrap_or(full);
            let vis = content.rsplit('\r').find(|p| !p.trim().is_empty());
            let vis = vis.unwrap_or("").trim_end();
            Line { full, vis }
        })
        .collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < lines.len() {
        let mut block = recognise(&lines, i);
        if i == 0 && block.is_none() {
            // A tail cut mid-trace starts with a piece of a frame: it goes with the frames.
            block = recognise(&lines, 1).filter(|b| b.cut);
        }
        let Some(block) = block else {
            out.push_str(lines[i].full);
            i += 1;
            continue;
        };
        if let Some(Keep(k, at, prefix)) = block.keep {
            out.push_str(prefix);
            out.push_str(&lines[k].full[at..]);
        }
        i = block.end.max(i + 1);
    }
    (out != text).then_some(out)
}

type Recogniser = fn(&[Line], usize) -> Option<Block>;

fn recognise(l: &[Line], i: usize) -> Option<Block> {
    if i >= l.len() {
        return None;
    }
    let runtimes: [Recogniser; 7] = [python, go, rust, php, node, stack, hex_dump];
    runtimes.iter().find_map(|recognise| recognise(l, i))
}

/// A hex dump (`hexdump::run_end`); it becomes `[hex dump]`.
fn hex_dump(l: &[Line], i: usize) -> Option<Block> {
    let end = hexdump::run_end(i, |k| l.get(k).map(|line| line.vis))?;
    let last = l[end - 1].full;
    let terminator = last.len() - last.trim_end_matches(['\n', '\r']).len();
    found(
        end,
        Some(Keep(end - 1, last.len() - terminator, hexdump::COLLAPSED)),
        false,
    )
}

fn vis<'a>(l: &[Line<'a>], k: usize) -> &'a str {
    l.get(k).map_or("", |x| x.vis)
}

/// The first line from `k` on whose visible text fails `test`.
fn skip(l: &[Line], mut k: usize, test: impl Fn(&str) -> bool) -> usize {
    while k < l.len() && test(l[k].vis) {
        k += 1;
    }
    k
}

fn skip_blank(l: &[Line], k: usize) -> usize {
    skip(l, k, str::is_empty)
}

/// A line fit to stand for a trace: not blank and not a frame or trace line of any runtime.
fn keepable(v: &str) -> bool {
    let trace = [&FRAME, &PY_FILE, &GO_FILE_STRICT, &GO_ROUTINE, &RUST_TAIL];
    !v.is_empty() && !trace.iter().any(|re| re.is_match(v)) && !PHP_FRAME.is_match(v)
}

/// The first frame within `span` lines from `from`, not looking past another error line.
fn frame_within(l: &[Line], from: usize, span: usize) -> Option<usize> {
    for (j, line) in l.iter().enumerate().skip(from).take(span) {
        if FRAME.is_match(line.vis) {
            return Some(j);
        }
        if STRONG.is_match(line.vis) {
            return None;
        }
    }
    None
}

fn python(l: &[Line], i: usize) -> Option<Block> {
    let body = |v: &str| {
        PY_FILE.is_match(v) || v.starts_with("    ") || v.starts_with("  [Previous line repeated")
    };
    let v = l[i].vis;
    // Cut inside a frame: source and caret lines, then the exception line.
    let cut = i <= 1 && v.starts_with("    ") && {
        let e = skip(l, i, body);
        let frame = |x: &Line| PY_CARET.is_match(x.vis) || PY_FILE.is_match(x.vis);
        l[i..e].iter().any(frame) && keepable(vis(l, e))
    };
    let headless = cut || PY_FILE.is_match(v);
    if !headless && v != TRACEBACK && !PY_GROUP.is_match(v) {
        return None;
    }
    let (mut k, mut keep) = (i, None);
    loop {
        let start = k;
        if PY_GROUP.is_match(l[k].vis) {
            let mut line = None;
            k += 1;
            while k < l.len() && l[k].vis.trim_start().starts_with(['+', '|']) {
                if let Some(m) = PY_GROUP_LINE.captures(l[k].vis).and_then(|c| c.get(1)) {
                    let at = m.as_str().as_ptr() as usize - l[k].full.as_ptr() as usize;
                    line = line.or(Some(Keep(k, at, "")));
                }
                k += 1;
            }
            keep = line.or(keep).or(kept(start));
        } else {
            k = skip(l, k + usize::from(l[k].vis == TRACEBACK), body);
            if keepable(vis(l, k)) {
                keep = kept(k);
                k += 1;
            } else if l[start].vis == TRACEBACK {
                keep = keep.or(kept(start));
            }
        }
        // Chained: the rest of this exception's message, a chaining sentence, a traceback.
        let rest = (k..l.len().min(k + 64)).find(|&j| l[j].vis.is_empty());
        let s = skip_blank(l, rest.unwrap_or(k));
        let t = skip_blank(l, s + 1);
        if !(PY_CHAIN.is_match(vis(l, s))
            && (vis(l, t) == TRACEBACK || PY_GROUP.is_match(vis(l, t))))
        {
            return found(k, keep, headless);
        }
        k = t;
    }
}

fn go(l: &[Line], i: usize) -> Option<Block> {
    let v = l[i].vis;
    if GO_PANIC.is_match(v) {
        let j = (i + 1..l.len().min(i + 10)).find(|&j| GO_ROUTINE.is_match(l[j].vis))?;
        return found(go_body(l, j), kept(i), false);
    }
    let func = !v.is_empty() && GO_FILE_STRICT.is_match(vis(l, i + 1));
    if func || GO_ROUTINE.is_match(v) || GO_FILE_STRICT.is_match(v) {
        return found(go_body(l, i), None, true);
    }
    None
}

fn go_body(l: &[Line], mut k: usize) -> usize {
    while let Some(line) = l.get(k) {
        let v = line.vis;
        let skipped = matches!(v, "...additional frames elided..." | "runtime stack:");
        if skipped || GO_ROUTINE.is_match(v) || GO_FILE.is_match(v) {
            k += 1;
        } else if GO_EXIT.is_match(v) {
            return k + 1;
        } else if v.is_empty() {
            let s = skip_blank(l, k);
            if !(GO_ROUTINE.is_match(vis(l, s)) || GO_EXIT.is_match(vis(l, s))) {
                break;
            }
            k = s;
        } else if GO_FILE.is_match(vis(l, k + 1)) {
            k += 2;
        } else {
            break;
        }
    }
    k
}

fn rust(l: &[Line], i: usize) -> Option<Block> {
    let v = l[i].vis;
    if RUST_PANIC_OLD.is_match(v) {
        return found(rust_tail(l, i + 1, false), kept(i), false);
    }
    if RUST_PANIC_NEW.is_match(v) {
        if i + 1 == l.len() {
            return found(i + 1, kept(i), false);
        }
        let k = skip(l, i + 2, |v| RUST_ASSERT.is_match(v));
        // The rest of a multi-line message, when a note or backtrace closes it.
        let tail = (k..l.len().min(k + 16))
            .take_while(|&t| !RUST_PANIC_NEW.is_match(l[t].vis))
            .find(|&t| RUST_TAIL.is_match(l[t].vis));
        let end = tail.map_or(k, |t| rust_tail(l, t, false));
        return found(end, Some(Keep(i + 1, 0, "panicked: ")), false);
    }
    let frame = RUST_NUMBERED.is_match(v) && (v.contains("::") || RUST_AT.is_match(vis(l, i + 1)));
    if frame || RUST_TAIL.is_match(v) {
        return found(rust_tail(l, i, frame), None, true);
    }
    // anyhow, or `main` returning an error with a source chain.
    let chain = vis(l, i + 1).is_empty() && vis(l, i + 2) == "Caused by:";
    if !(v.starts_with("Error: ") && chain && vis(l, i + 3).starts_with("    ")) {
        return None;
    }
    let mut k = skip(l, i + 3, |v| v.starts_with("    "));
    let s = skip_blank(l, k);
    if vis(l, s) == "Stack backtrace:" {
        k = rust_tail(l, s, false);
    }
    found(k, kept(i), false)
}

/// Past the notes and backtrace that follow a Rust panic or error.
fn rust_tail(l: &[Line], mut k: usize, mut frames: bool) -> usize {
    while let Some(line) = l.get(k) {
        let v = line.vis;
        if RUST_TAIL.is_match(v) {
            frames |= v.ends_with("backtrace:");
        } else if !(frames && (RUST_NUMBERED.is_match(v) || RUST_AT.is_match(v))) {
            break;
        }
        k += 1;
    }
    k
}

fn php(l: &[Line], i: usize) -> Option<Block> {
    let v = l[i].vis;
    if PHP_UNCAUGHT.is_match(v) {
        let stack = (i + 1..l.len().min(i + 9)).find(|&j| PHP_STACK.is_match(l[j].vis));
        let end = stack.map_or(i + 1, |j| php_body(l, j, &mut None));
        return found(end, kept(i), false);
    }
    let listed = PHP_STACK.is_match(v) && PHP_FRAME.is_match(vis(l, i + 1));
    if listed || PHP_FRAME.is_match(v) || PHP_THROWN.is_match(v) {
        let mut keep = None;
        return found(php_body(l, i, &mut keep), keep, true);
    }
    None
}

fn php_body(l: &[Line], mut k: usize, keep: &mut Option<Keep>) -> usize {
    let blank_before_next =
        |k: usize| l[k].vis.is_empty() && PHP_NEXT.is_match(vis(l, skip_blank(l, k)));
    while let Some(line) = l.get(k) {
        let v = line.vis;
        if PHP_NEXT.is_match(v) {
            *keep = keep.or(kept(k));
        } else if PHP_THROWN.is_match(v) {
            return k + 1;
        } else if !(PHP_STACK.is_match(v) || PHP_FRAME.is_match(v) || blank_before_next(k)) {
            break;
        }
        k += 1;
    }
    k
}

fn node(l: &[Line], i: usize) -> Option<Block> {
    let v = l[i].vis;
    if NODE_VERSION.is_match(v) {
        return found(i + 1, None, false);
    }
    // `/app/index.js:3`, the source line, a caret: an uncaught error follows.
    if !(NODE_EXCERPT.is_match(v) && NODE_CARET.is_match(vis(l, i + 2))) {
        return None;
    }
    let e = skip_blank(l, i + 3);
    let mut k = e + 1;
    if vis(l, e).ends_with(" {") {
        k = props_end(l, k);
    } else if let Some(j) = frame_within(l, k, 8) {
        k = j;
    }
    let keep = kept(e).filter(|_| keepable(vis(l, e)));
    found(stack_body(l, k.min(l.len()), &mut None), keep, false)
}

/// Past the `}` closing the properties Node prints after an error's stack.
fn props_end(l: &[Line], from: usize) -> usize {
    for (j, line) in l.iter().enumerate().skip(from).take(256) {
        if line.vis == "}" {
            return j + 1;
        }
        if !line.vis.is_empty() && !line.vis.starts_with(char::is_whitespace) {
            break;
        }
    }
    from
}

/// Traces whose frames follow the error line: JVM, .NET, Node.js, Ruby, Perl.
fn stack(l: &[Line], i: usize) -> Option<Block> {
    let v = l[i].vis;
    if FRAME.is_match(v) || (CAUSE.is_match(v) && frame_within(l, i + 1, 8).is_some()) {
        let mut keep = None;
        return found(stack_body(l, i, &mut keep), keep, true);
    }
    let first = if STRONG.is_match(v) {
        frame_within(l, i + 1, 8)
    } else {
        // Above a frame, a line of any shape is the error, unless the text was cut there.
        let above = i > 0 || ERRORISH.is_match(v);
        (above && !v.is_empty() && FRAME.is_match(vis(l, i + 1))).then_some(i + 1)
    }?;
    let mut keep = kept(i);
    found(stack_body(l, first, &mut keep), keep, false)
}

fn stack_body(l: &[Line], mut k: usize, keep: &mut Option<Keep>) -> usize {
    while let Some(line) = l.get(k) {
        let v = line.vis;
        if FRAME.is_match(v) || SEPARATOR.is_match(v) {
            k += 1;
            if v.ends_with(" {") {
                k = props_end(l, k);
            }
        } else if let Some(j) = (CAUSE.is_match(v) || RUBY.is_match(v))
            .then(|| frame_within(l, k + 1, 8))
            .flatten()
        {
            if !v.trim_start().starts_with("Suppressed:") {
                *keep = keep.or(kept(k));
            }
            k = j;
        } else {
            break;
        }
    }
    if vis(l, k).starts_with("(Use `node --trace-") {
        k += 1;
    }
    let s = skip_blank(l, k);
    if NODE_VERSION.is_match(vis(l, s)) {
        k = s + 1;
    }
    k
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the summary picks: the last line with visible text.
    fn last(text: &str) -> &str {
        text.split(['\n', '\r'])
            .map(str::trim)
            .rfind(|l| !l.is_empty())
            .unwrap_or("")
    }

    /// Collapses `trace`, checks the properties every result has, and returns it.
    fn check(trace: &str, error: &str, gone: &[&str]) -> String {
        let out = collapse(trace).into_owned();
        assert_eq!(last(&out), error, "collapsed:\n{out}");
        for text in gone {
            assert!(!out.contains(text), "{text:?} left in:\n{out}");
        }
        assert_no_frames(&out);
        assert_eq!(collapse(&out), out, "not idempotent");
        assert!(out.len() <= trace.len());
        out
    }

    fn assert_no_frames(out: &str) {
        let frame = |l: &str| {
            [&FRAME, &PY_FILE, &GO_FILE_STRICT, &GO_ROUTINE, &PHP_FRAME]
                .iter()
                .any(|re| re.is_match(l))
                || (RUST_NUMBERED.is_match(l) && l.contains("::"))
        };
        assert!(
            !out.lines().any(|l| frame(l.trim_end())),
            "frame left in:\n{out}"
        );
    }

    const PYTHON: &str = r#"Traceback (most recent call last):
  File "/app/job.py", line 3, in load
    return int(raw)
           ^^^^^^^^
ValueError: invalid literal for int() with base 10: 'x'

The above exception was the direct cause of the following exception:

Traceback (most recent call last):
  File "/app/job.py", line 10, in main
    load(rows["id"])
  File "/app/job.py", line 5, in load
    raise RuntimeError("row 17 has no customer id") from err
RuntimeError: row 17 has no customer id

During handling of the above exception, another exception occurred:

Traceback (most recent call last):
  File "/app/job.py", line 15, in <module>
    main()
  File "/app/job.py", line 13, in main
    d["k"]
    ~^^^^^
KeyError: 'k'
"#;

    #[test]
    fn python_chained_keeps_the_last_exception() {
        let out = check(
            PYTHON,
            "KeyError: 'k'",
            &["File", "ValueError", "During", "^^^"],
        );
        assert_eq!(out, "KeyError: 'k'\n");
    }

    #[test]
    fn python_logged_trace_between_ordinary_lines() {
        let text = "INFO starting\nERROR lookup failed\nTraceback (most recent call last):\n  \
                    File \"/app/job.py\", line 5, in <module>\n    {}[\"k\"]\n    ~~^^^^^\n\
                    KeyError: 'k'\ndone: 3 rows\n";
        let out = check(text, "done: 3 rows", &["File"]);
        assert_eq!(
            out,
            "INFO starting\nERROR lookup failed\nKeyError: 'k'\ndone: 3 rows\n"
        );
    }

    #[test]
    fn python_exception_group_and_syntax_error() {
        let group = r#"Traceback (most recent call last):
  File "/app/grp.py", line 10, in f
    raise ValueError("inner")
ValueError: inner

During handling of the above exception, another exception occurred:

  + Exception Group Traceback (most recent call last):
  |   File "/app/grp.py", line 14, in <module>
  |     f()
  |   File "/app/grp.py", line 12, in f
  |     raise ExceptionGroup("many", [e, TypeError(2)])
  | ExceptionGroup: many (2 sub-exceptions)
  +-+---------------- 1 ----------------
    | Traceback (most recent call last):
    |   File "/app/grp.py", line 10, in f
    |     raise ValueError("inner")
    | ValueError: inner
    +---------------- 2 ----------------
    | TypeError: 2
    +------------------------------------
"#;
        let out = check(
            group,
            "ExceptionGroup: many (2 sub-exceptions)",
            &["|", "File"],
        );
        assert_eq!(out, "ExceptionGroup: many (2 sub-exceptions)\n");
        let syntax = "  File \"/app/x.py\", line 1\n    def f(\n         ^\n\
                      SyntaxError: '(' was never closed\n";
        check(syntax, "SyntaxError: '(' was never closed", &["def f"]);
        let recursion = "Traceback (most recent call last):\n  File \"/app/r.py\", line 3, in <module>\n    \
                         f()\n  File \"/app/r.py\", line 2, in f\n    def f(): f()\n             ^^^\n  \
                         [Previous line repeated 996 more times]\nRecursionError: maximum recursion \
                         depth exceeded\n";
        check(
            recursion,
            "RecursionError: maximum recursion depth exceeded",
            &["Previous"],
        );
    }

    const JAVA: &str = "Exception in thread \"main\" java.lang.IllegalStateException: boom
\tat App.run(App.java:4)
\tat App.main(App.java:6)
Caused by: java.io.IOException: disk full
\tat App.write(App.java:2)
\tat App.run(App.java:4)
\t... 1 more
\tat java.base/jdk.internal.reflect.NativeMethodAccessorImpl.invoke0(Native Method)
\tat jdk.compiler/com.sun.tools.javac.launcher.Main.main(Main.java:132)
";

    #[test]
    fn java_keeps_the_outermost_exception() {
        let out = check(
            JAVA,
            "Exception in thread \"main\" java.lang.IllegalStateException: boom",
            &["at App", "Caused by", "more"],
        );
        assert_eq!(out.lines().count(), 1);
        // Written by a Windows-minded runtime: the line endings stay as they were.
        let crlf = check(&JAVA.replace('\n', "\r\n"), last(&out), &["at App"]);
        assert_eq!(crlf, out.replace('\n', "\r\n"));
    }

    #[test]
    fn kotlin_and_logged_java_traces() {
        let kotlin =
            "Exception in thread \"main\" kotlinx.coroutines.TimeoutCancellationException: \
                      Timed out waiting for 100 ms
\tat kotlinx.coroutines.TimeoutKt.TimeoutCancellationException(Timeout.kt:191)
\tat kotlinx.coroutines.EventLoopImplBase$DelayedResumeTask.run(EventLoop.common.kt:498)
\t(Coroutine boundary)
\tat MainKt$main$1.invokeSuspend(Main.kt:5)
\tat MainKt.main(Main.kt)
";
        check(
            kotlin,
            "Exception in thread \"main\" kotlinx.coroutines.TimeoutCancellationException: \
             Timed out waiting for 100 ms",
            &["Coroutine", "MainKt"],
        );
        let logged = "INFO starting
2024-05-01 10:32:00 ERROR c.e.Job - row failed
java.lang.RuntimeException: row 17
\tat com.example.Job.process(Job.java:42) ~[job.jar:1.0]
\tat com.example.Job.run(Job.java:20) ~[job.jar:1.0]
Caused by: java.sql.SQLException: timeout
\tat org.h2.Driver.connect(Driver.java:59)
\t... 2 common frames omitted
done: 3 rows
";
        let out = check(logged, "done: 3 rows", &["Caused", "omitted"]);
        assert_eq!(
            out,
            "INFO starting\n2024-05-01 10:32:00 ERROR c.e.Job - row failed\n\
             java.lang.RuntimeException: row 17\ndone: 3 rows\n"
        );
    }

    const GO: &str = "panic: runtime error: index out of range [5] with length 3

goroutine 1 [running]:
main.main()
\t/app/main.go:8 +0x1d
exit status 2
";

    #[test]
    fn go_panics_and_fatal_errors() {
        let out = check(
            GO,
            "panic: runtime error: index out of range [5] with length 3",
            &["goroutine", "exit status"],
        );
        assert_eq!(
            out,
            "panic: runtime error: index out of range [5] with length 3\n"
        );
        let nil = "panic: runtime error: invalid memory address or nil pointer dereference
[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x48f4b6]

goroutine 1 [running]:
main.(*Store).Get(...)
\t/app/store.go:12
main.main()
\t/app/main.go:9 +0x16
";
        check(
            nil,
            "panic: runtime error: invalid memory address or nil pointer dereference",
            &["SIGSEGV", "Store"],
        );
        let fatal = "fatal error: all goroutines are asleep - deadlock!

goroutine 1 [chan receive]:
main.main()
\t/app/main.go:5 +0x2d

goroutine 18 [chan send, 2 minutes]:
main.worker(0x0?)
\t/app/main.go:14 +0x65
created by main.main in goroutine 1
\t/app/main.go:20 +0x2f
exit status 2
";
        check(
            fatal,
            "fatal error: all goroutines are asleep - deadlock!",
            &["worker"],
        );
    }

    const RUST: &str = "thread 'main' (28022) panicked at src/main.rs:2:5:
index out of bounds: the len is 0 but the index is 3
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace
";

    #[test]
    fn rust_panics() {
        let out = check(
            RUST,
            "panicked: index out of bounds: the len is 0 but the index is 3",
            &["note"],
        );
        assert_eq!(out.lines().count(), 1);
        let unnumbered = "thread 'main' panicked at src/main.rs:2:5:\nboom\nnote: run with \
                          `RUST_BACKTRACE=1` environment variable to display a backtrace\n";
        check(unnumbered, "panicked: boom", &["thread"]);
        let assert = "thread 'main' (27975) panicked at src/main.rs:1:73:
assertion `left == right` failed
  left: 1
 right: 2
stack backtrace:
   0: __rustc::rust_begin_unwind
             at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/std/src/panicking.rs:689:5
   1: core::panicking::panic_fmt
             at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/panicking.rs:80:14
   2: core::panicking::assert_failed::<i32, i32>
   3: m::main
             at ./src/main.rs:1:73
   4: core::ops::function::FnOnce::call_once
note: Some details are omitted, run with `RUST_BACKTRACE=full` for a verbose backtrace.
";
        check(
            assert,
            "panicked: assertion `left == right` failed",
            &["left:", "rustc", "note"],
        );
        let old = "thread 'main' panicked at 'boom', src/main.rs:2:5\nnote: run with \
                   `RUST_BACKTRACE=1` environment variable to display a backtrace\n";
        check(
            old,
            "thread 'main' panicked at 'boom', src/main.rs:2:5",
            &["note"],
        );
        // A second panic prints no note; output after the message stays.
        let second = "thread 'tokio-runtime-worker' (7) panicked at src/lib.rs:9:5:\nconnection lost\n\
                      Error: JoinError::Panic(Id(3), \"connection lost\", ...)\n";
        let out = check(
            second,
            "Error: JoinError::Panic(Id(3), \"connection lost\", ...)",
            &[],
        );
        assert!(out.starts_with("panicked: connection lost\n"), "{out}");
    }

    #[test]
    fn rust_error_from_main() {
        let numbered = "Error: failed to load config

Caused by:
    0: reading /etc/x
    1: No such file or directory (os error 2)

Stack backtrace:
   0: <E as anyhow::context::ext::StdError>::ext_context
             at /root/.cargo/registry/src/anyhow-1.0.105/src/backtrace.rs:10:14
   1: ah::main
  19: _start
";
        let out = check(
            numbered,
            "Error: failed to load config",
            &["Caused", "reading", "_start"],
        );
        assert_eq!(out, "Error: failed to load config\n");
        let single = "Error: failed to load config\n\nCaused by:\n    No such file or directory (os error 2)\n";
        check(single, "Error: failed to load config", &["No such"]);
    }

    const NODE: &str = "/app/index.js:2
  throw new Error('boom');
  ^

Error: boom
    at f (/app/index.js:2:9)
    at Object.<anonymous> (/app/index.js:4:1)
    at Module._compile (node:internal/modules/cjs/loader:1521:14)
    at Function.executeUserEntryPoint [as runMain] (node:internal/modules/run_main:164:12)
    at node:internal/main/run_main_module:28:49

Node.js v20.20.2
";

    #[test]
    fn node_uncaught_errors() {
        let out = check(NODE, "Error: boom", &["throw", "Node.js", "^"]);
        assert_eq!(out, "Error: boom\n");
        let props = "node:fs:573
  return binding.open(
                 ^

Error: ENOENT: no such file or directory, open '/nope'
    at Object.openSync (node:fs:573:18)
    at [eval]:1:15
    at node:internal/main/eval_string:51:3 {
  errno: -2,
  code: 'ENOENT',
  detail: { a: 1, b: [ 1, 2 ] }
}

Node.js v20.20.2
";
        let out = check(
            props,
            "Error: ENOENT: no such file or directory, open '/nope'",
            &["ENOENT',"],
        );
        assert_eq!(out.lines().count(), 1);
        let cause = "Error: outer
    at file:///app/c.mjs:1:22
    ... 2 lines matching cause stack trace ...
    at async ModuleLoader.import (node:internal/modules/esm/loader:606:24) {
  [cause]: Error: inner
      at file:///app/c.mjs:1:50
      at async ModuleLoader.import (node:internal/modules/esm/loader:606:24)
}
";
        check(cause, "Error: outer", &["inner", "matching"]);
        let assertion = "node:assert:90
  throw new AssertionError(obj);
  ^

AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:

1 !== 2

    at Object.<anonymous> (/app/d.js:1:42)
    at node:internal/main/run_main_module:28:49 {
  code: 'ERR_ASSERTION'
}

Node.js v20.20.2
";
        check(
            assertion,
            "AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:",
            &["!=="],
        );
        let string = "[eval]:1\nthrow \"str\"\n^\nstr\n(Use `node --trace-uncaught ...` to show where \
                      the exception was thrown)\n\nNode.js v20.20.2\n";
        assert_eq!(check(string, "str", &["Use"]), "str\n");
        check(
            "Uncaught TypeError: x is not a function\n    at REPL1:1:1\n",
            "Uncaught TypeError: x is not a function",
            &[],
        );
        let deno = "error: Uncaught (in promise) Error: boom\n    at file:///app/x.ts:1:7\n";
        check(deno, "error: Uncaught (in promise) Error: boom", &["x.ts"]);
    }

    const RUBY34: &str = "/app/x.rb:2:in 'Object#foo': boom (RuntimeError)
\tfrom /app/x.rb:6:in 'Object#bar'
\tfrom /app/x.rb:9:in '<main>'
/app/x.rb:4:in 'Integer#+': inner (TypeError)
\tfrom /app/x.rb:9:in '<main>'
";

    #[test]
    fn ruby_traces() {
        let ruby33 = "/app/x.rb:2:in `foo': boom (RuntimeError)\n\tfrom /app/x.rb:5:in `<main>'\n";
        check(
            ruby33,
            "/app/x.rb:2:in `foo': boom (RuntimeError)",
            &["from"],
        );
        let out = check(
            RUBY34,
            "/app/x.rb:2:in 'Object#foo': boom (RuntimeError)",
            &["inner"],
        );
        assert_eq!(out.lines().count(), 1);
        let highlight = "/app/x.rb:2:in 'bar': undefined method 'upcase' for nil (NoMethodError)

  x.upcase
   ^^^^^^^
\tfrom /app/x.rb:5:in '<main>'
";
        check(
            highlight,
            "/app/x.rb:2:in 'bar': undefined method 'upcase' for nil (NoMethodError)",
            &["^"],
        );
        let deep = "/app/x.rb:2:in 'f': stack level too deep (SystemStackError)
\tfrom /app/x.rb:2:in 'f'
\t ... 10067 levels...
\tfrom /app/x.rb:5:in '<main>'
";
        check(
            deep,
            "/app/x.rb:2:in 'f': stack level too deep (SystemStackError)",
            &["levels"],
        );
    }

    const PHP: &str = "PHP Fatal error:  Uncaught Exception: boom in /app/x.php:3
Stack trace:
#0 /app/x.php(7): f()
#1 {main}
  thrown in /app/x.php on line 3
";

    #[test]
    fn php_uncaught_exception() {
        let out = check(
            PHP,
            "PHP Fatal error:  Uncaught Exception: boom in /app/x.php:3",
            &["#1", "thrown"],
        );
        assert_eq!(out.lines().count(), 1);
        let next = "PHP Fatal error:  Uncaught Exception: inner in /app/x.php:3
Stack trace:
#0 {main}

Next RuntimeException: outer in /app/x.php:5
Stack trace:
#0 [internal function]: g()
#1 {main}
  thrown in /app/x.php on line 5
";
        check(
            next,
            "PHP Fatal error:  Uncaught Exception: inner in /app/x.php:3",
            &["Next"],
        );
    }

    const DOTNET: &str = "Unhandled exception. System.InvalidOperationException: boom
 ---> System.IO.IOException: inner
   at Program.<Main>$(String[] args) in /app/Program.cs:line 5
   --- End of inner exception stack trace ---
   at Program.<Main>$(String[] args) in /app/Program.cs:line 9
   at Program.<Main>(String[] args)
";

    #[test]
    fn dotnet_unhandled_exception() {
        let out = check(
            DOTNET,
            "Unhandled exception. System.InvalidOperationException: boom",
            &["inner", "End of"],
        );
        assert_eq!(out.lines().count(), 1);
        let rethrown = "Unhandled exception. System.Exception: boom
   at Program.<<Main>$>g__F|0_0() in /app/Program.cs:line 3
--- End of stack trace from previous location ---
   at Program.<Main>$(String[] args) in /app/Program.cs:line 5
";
        check(
            rethrown,
            "Unhandled exception. System.Exception: boom",
            &["End of"],
        );
    }

    const PERL: &str = "boom at x.pl line 2.
\tmain::foo(1, \"a\") called at x.pl line 3
\tmain::bar(1, \"a\") called at x.pl line 4
";

    #[test]
    fn perl_carp_confess() {
        assert_eq!(
            check(PERL, "boom at x.pl line 2.", &["called"]),
            "boom at x.pl line 2.\n"
        );
    }

    #[test]
    fn traces_cut_at_the_start() {
        let java = "(FileSystem.java:12)\n\tat a.Foo.main(Foo.java:3)\nCaused by: java.io.IOException: \
                    disk full\n\tat a.Disk.write(Disk.java:40)\n\t... 2 more\n";
        let out = check(
            java,
            "Caused by: java.io.IOException: disk full",
            &["FileSystem"],
        );
        assert_eq!(out.lines().count(), 1);
        let python = "    return int(raw)\n           ^^^^^^^^\nValueError: bad\n";
        assert_eq!(
            check(python, "ValueError: bad", &["raw"]),
            "ValueError: bad\n"
        );
        let python = "b.py\", line 3, in load\n    x()\n  File \"/app/b.py\", line 9, in x\n    y\nNameError: y\n";
        assert_eq!(check(python, "NameError: y", &["b.py"]), "NameError: y\n");
        let node = NODE.split_at(NODE.find("er:1521").unwrap()).1;
        assert_eq!(check(node, "", &["er:1521"]), "");
        let go = "0x1d\nmain.worker(0x0?)\n\t/app/main.go:14 +0x65\ncreated by main.main in goroutine 1\n\
                  \t/app/main.go:20 +0x2f\nexit status 2\n";
        assert_eq!(check(go, "", &["0x1d"]), "");
        let rust = "/library/core/src/panicking.rs:80:14\n   2: m::main\n   3: core::ops::function::\
                    FnOnce::call_once\nnote: Some details are omitted, run with `RUST_BACKTRACE=full`\n";
        assert_eq!(check(rust, "", &["panicking"]), "");
        let php = "p(7): f()\n#1 {main}\n  thrown in /app/x.php on line 3\n";
        assert_eq!(check(php, "", &["main"]), "");
    }

    #[test]
    fn benign_text_is_left_alone() {
        let benign = [
            "INFO starting\nat 10:32 the job started\n  at 10:33 it was still running\ndone: 3 rows\n",
            "Error: bad input\n",
            "reading rows\nError: bad input\nusage: job [--dry-run]\n",
            "retrying\nCaused by a network blip, the upload failed\n",
            "panic: not really, just a word\nexit status 2\n",
            "    at the moment (maybe)\nValueError: nothing\n",
            "   1: first step\n   2: second step\nnote: two steps\n",
            "psql:q.sql:3: ERROR:  syntax error\nLINE 1: SELECT FROM\n               ^\n",
            "",
            "\n\n",
            "plain\r\n\tstill plain\r\n",
        ];
        for text in benign {
            assert!(
                matches!(collapse(text), Cow::Borrowed(t) if t == text),
                "{text:?}"
            );
        }
    }

    #[test]
    fn idempotent_and_never_longer_on_mixtures() {
        let fixtures = [
            PYTHON,
            JAVA,
            NODE,
            GO,
            RUST,
            PHP,
            RUBY34,
            DOTNET,
            PERL,
            "INFO x\n",
            "\n",
            "Error: bad input\n",
        ];
        let pool: Vec<&str> = fixtures
            .iter()
            .flat_map(|t| t.split_inclusive('\n'))
            .collect();
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        for round in 0..2000 {
            let mut text = String::new();
            for _ in 0..(round % 40) {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                text.push_str(pool[(seed % pool.len() as u64) as usize]);
            }
            let once = collapse(&text);
            assert!(once.len() <= text.len());
            assert_eq!(collapse(&once), once, "input:\n{text}");
        }
        let joined = fixtures.concat();
        let once = collapse(&joined);
        assert_eq!(collapse(&once), once);
        assert_eq!(last(&once), "Error: bad input");
    }

    #[test]
    fn odd_input_does_not_panic() {
        let bytes: Vec<u8> = (0..=255u8).cycle().take(70_000).collect();
        let huge = "\tat ".to_owned() + &"x".repeat(1 << 20) + "(A.java:1)\n";
        let inputs = [
            String::from_utf8_lossy(&bytes).into_owned(),
            huge,
            "\r\r\n\r".to_owned(),
            "thread 'main' panicked at a.rs:1:1:".to_owned(),
            "Traceback (most recent call last):".to_owned(),
            "panic: x\n\ngoroutine 1 [running]:".to_owned(),
            "/a.js:1\nx\n^".to_owned(),
            "  + Exception Group Traceback (most recent call last):\n  | X".to_owned(),
            "Error: x\n\nCaused by:\n    y".to_owned(),
        ];
        for text in &inputs {
            let once = collapse(text);
            assert!(once.len() <= text.len());
            assert_eq!(collapse(&once), once);
        }
    }

    /// `ldapsearch -d -1` against a server that refuses the bind, as printed here (OpenLDAP
    /// 2.5), and the same dump by `xxd`, `hexdump -C` and `od`.
    #[test]
    fn hex_dumps_become_one_line_without_their_text() {
        let ldap = "ber_scanf fmt ({i) ber:\nber_flush2: 56 bytes to sd 3\n  0000:  30 36 02 01 01 60 31 02  01 03 04 1b 63 6e 3d 61   06...`1.....cn=a  \n  0010:  64 6d 69 6e 2c 64 63 3d  63 6f 72 70 2c 64 63 3d   dmin,dc=corp,dc=  \n  0020:  65 78 61 6d 70 6c 65 80  0f 4b 71 38 76 4e 32 78   example..Kq8vN2x  \n  0030:  4c 2f 52 74 35 70 51 39                            L/Rt5pQ9          \nldap_write: want=56, written=56\n";
        let want = "ber_scanf fmt ({i) ber:\nber_flush2: 56 bytes to sd 3\n[hex dump]\nldap_write: want=56, written=56\n";
        assert_eq!(collapse(ldap), want);
        let scrubbed = ldap
            .replace("example..Kq8vN2x", "[REDACTED]")
            .replace("L/Rt5pQ9", "[REDACTED]");
        assert_eq!(collapse(&scrubbed), want);
        for dump in [
            "00000000: 646e 3a20 636e 3d61 646d 696e 0a70 6173  dn: cn=admin.pas\n00000010: 7377 6f72 643a 204b 7138 764e 3278 4c2f  sword: Kq8vN2xL/\n00000020: 5274 3570 5139 0a                        Rt5pQ9.",
            "00000000  64 6e 3a 20 63 6e 3d 61  64 6d 69 6e 0a 70 61 73  |dn: cn=admin.pas|\n00000010  73 77 6f 72 64 3a 20 4b  71 38 76 4e 32 78 4c 2f  |sword: Kq8vN2xL/|\n00000020  52 74 35 70 51 39 0a                              |Rt5pQ9.|",
            "0000000   d   n   :       c   n   =   a   d   m   i   n  \\n   p   a   s\n0000020   s   w   o   r   d   :       K   q   8   v   N   2   x   L   /",
            "000000 64 6e 3a 20 63 6e 3d 61 64 6d 69 6e 0a 70 61 73  >dn: cn=admin.pas<\n000010 73 77 6f 72 64 3a 20 4b 71 38 76 4e 32 78 4c 2f  >sword: Kq8vN2xL/<",
            "0000000 64 6e 3a 20 63 6e 3d 61 64 6d 69 6e 0a 70 61 73\n0000020 73 77 6f 72 64 3a 20 4b 71 38 76 4e 32 78 4c 2f",
        ] {
            let text = format!("$ dump secrets.txt\n{dump}\n");
            assert_eq!(
                collapse(&text),
                "$ dump secrets.txt\n[hex dump]\n",
                "{dump}"
            );
        }
        for text in [
            "2026: 12 07 18 13  deploy started\n2027: 12 07 18 13  deploy started\n",
            "0000000 64 6e 3a 20 63 6e 3d 61 64 6d 69 6e 0a 70 61 73\n",
        ] {
            assert_eq!(collapse(text), text);
        }
    }
}
