//! Just enough Markdown for the documentation checks: the documents themselves, their
//! fenced code blocks (with the comment line before each), their headings as GitHub turns
//! them into anchors, their relative links, and their inline code spans.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// One document, read from the repository.
pub struct Doc {
    /// The path from the repository's root, e.g. `docs/state.md`.
    pub path: PathBuf,
    pub text: String,
}

/// The repository's root (where the binary's Cargo.toml is).
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The documents the checks cover: the README, CONTRIBUTING.md, the benchmarks' and the
/// scrubber's READMEs, and every Markdown file in `docs/` (read from the directory, so a
/// new page is covered without being listed here).
pub fn documents() -> Vec<Doc> {
    let root = root();
    let mut paths: Vec<PathBuf> = [
        "README.md",
        "CONTRIBUTING.md",
        "bench/README.md",
        "crates/scrub/README.md",
    ]
    .iter()
    .map(PathBuf::from)
    .collect();
    let mut pages: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .expect("docs/ can be read")
        .map(|entry| entry.expect("docs/ entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "md"))
        .map(|path| {
            path.strip_prefix(&root)
                .expect("under the root")
                .to_path_buf()
        })
        .collect();
    pages.sort();
    assert!(pages.len() >= 8, "docs/ holds {} pages", pages.len());
    paths.extend(pages);
    paths
        .into_iter()
        .map(|path| Doc {
            text: std::fs::read_to_string(root.join(&path))
                .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display())),
            path,
        })
        .collect()
}

/// A fenced code block.
pub struct Fence {
    /// What follows the opening backticks: `console`, `sh`, `` (none) …
    pub info: String,
    /// The 1-based line of the opening fence.
    pub line: usize,
    /// The block's lines, with the fence's indentation removed, each with its line number.
    pub body: Vec<(usize, String)>,
    /// The last non-blank line before the fence, when it is an HTML comment
    /// (`<!-- not run: … -->`), without the comment's delimiters.
    pub comment: Option<String>,
}

/// Every fenced code block of `text`, in order.
pub fn fences(text: &str) -> Vec<Fence> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let Some((indent, info)) = fence_open(lines[i]) else {
            i += 1;
            continue;
        };
        let comment = lines[..i]
            .iter()
            .rev()
            .find(|line| !line.trim().is_empty())
            .and_then(|line| line.trim().strip_prefix("<!--"))
            .and_then(|line| line.strip_suffix("-->"))
            .map(|inner| inner.trim().to_string());
        let mut fence = Fence {
            info,
            line: i + 1,
            body: Vec::new(),
            comment,
        };
        i += 1;
        while i < lines.len() && lines[i].trim() != "```" {
            let line = lines[i];
            let cut = line.len() - line.trim_start().len();
            fence
                .body
                .push((i + 1, line[cut.min(indent)..].to_string()));
            i += 1;
        }
        out.push(fence);
        i += 1;
    }
    out
}

/// The indentation and info string of an opening fence line.
fn fence_open(line: &str) -> Option<(usize, String)> {
    let trimmed = line.trim_start();
    let info = trimmed.strip_prefix("```")?;
    Some((line.len() - trimmed.len(), info.trim().to_string()))
}

/// The lines of `text` outside fenced code blocks, each with its 1-based number.
pub fn prose_lines(text: &str) -> Vec<(usize, &str)> {
    let mut inside = false;
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            inside = !inside;
            continue;
        }
        if !inside {
            out.push((n + 1, line));
        }
    }
    out
}

/// The tables of `text` outside code blocks: the line each starts on, and its rows (the
/// header first; the `|---|` line left out).
pub fn tables(text: &str) -> Vec<(usize, Vec<&str>)> {
    let mut out: Vec<(usize, Vec<&str>)> = Vec::new();
    let mut previous: Option<usize> = None;
    for (n, line) in prose_lines(text) {
        if !line.starts_with('|') {
            continue;
        }
        let continues = previous.is_some_and(|p| p + 1 == n);
        if !continues {
            out.push((n, Vec::new()));
        }
        if !line.starts_with("|-") && !line.starts_with("| -") {
            out.last_mut().expect("a table").1.push(line);
        }
        previous = Some(n);
    }
    out
}

/// The anchors GitHub makes for the headings of `text`: the heading's text in lower case,
/// with everything but letters, digits, spaces, `-` and `_` removed and each space made a
/// `-`; a repeated anchor gets `-1`, `-2` … in order.
pub fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    for (_, line) in prose_lines(text) {
        let Some(heading) = heading_text(line) else {
            continue;
        };
        let base = slug(heading);
        let mut anchor = base.clone();
        let mut n = 0;
        while seen.contains(&anchor) {
            n += 1;
            anchor = format!("{base}-{n}");
        }
        seen.insert(anchor);
    }
    seen
}

/// The text of an ATX heading line (`## Text`).
fn heading_text(line: &str) -> Option<&str> {
    let hashes = line.len() - line.trim_start_matches('#').len();
    if !(1..=6).contains(&hashes) {
        return None;
    }
    line[hashes..].strip_prefix(' ').map(str::trim)
}

/// GitHub's anchor for a heading's text.
pub fn slug(heading: &str) -> String {
    heading
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The targets of the inline links (`[text](target)`) on a prose line, outside code spans.
pub fn link_targets(line: &str) -> Vec<String> {
    let line = without_code_spans(line);
    let mut out = Vec::new();
    let mut rest = line.as_str();
    while let Some(at) = rest.find("](") {
        let after = &rest[at + 2..];
        let end = after.find(')').unwrap_or(after.len());
        let target = after[..end].split_whitespace().next().unwrap_or("");
        out.push(target.trim_matches(['<', '>']).to_string());
        rest = &after[end..];
    }
    out
}

/// `line` with its inline code spans removed.
fn without_code_spans(line: &str) -> String {
    line.split('`').step_by(2).collect::<Vec<_>>().join("")
}

/// The inline code spans of a prose line.
pub fn code_spans(line: &str) -> Vec<&str> {
    line.split('`').skip(1).step_by(2).collect()
}

/// Where a relative link from `doc` leads, from the repository's root; `None` when it
/// leads out of the repository.
pub fn resolve(doc: &Path, target: &str) -> Option<PathBuf> {
    let mut path = doc.parent().unwrap_or(Path::new("")).to_path_buf();
    for part in target.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if !path.pop() {
                    return None;
                }
            }
            _ => path.push(part),
        }
    }
    Some(path)
}
