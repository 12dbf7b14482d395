//! The folders of `src/` use each other in one direction: no import cycle between them
//! (ARCHITECTURE.md, "Dependencies between the folders"), and no new one between files. The uses are read from the source
//! itself: every `crate::` and `super::` path (and `crontap_run::` in `main.rs`) outside
//! test code (`#[cfg(test)]` items, and the files of modules declared under it). Each
//! top-level module counts as a folder, `app.rs` or `cli.rs` as much as `run/`.
//!
//! The cycles still there are listed in [`ALLOWED`] by the one use that closes each; the
//! list may only shrink: a use listed that is gone fails the test until it leaves the list.
//!
//! Between the files of the crate, the groups that use each other in a circle are exactly
//! those in [`FILE_CYCLES`], which may only shrink too.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Uses (from, to) that close a cycle between folders still present, each with what it is
/// for. Take one out by moving what it uses to where it belongs.
const ALLOWED: &[(&str, &str, &str)] = &[];

/// The groups of files (module paths, sorted) that use each other in a circle today, each
/// with why; the list may only shrink, and the test fails until it says what is true.
/// A folder's `mod.rs` and its own files are not counted (see [`file_graph`]).
const FILE_CYCLES: &[(&[&str], &str)] = &[];

/// A token of Rust source, as far as paths need: names, `::`, and single punctuation.
#[derive(Debug, Clone, PartialEq)]
enum Token {
    Name(String),
    Str(String),
    PathSep,
    Punct(char),
}

/// The tokens of `text`, each with its line; comments, and the contents of character
/// literals, are dropped.
fn lex(text: &str) -> Vec<(Token, usize)> {
    let chars: Vec<char> = text.chars().collect();
    let (mut tokens, mut line, mut i) = (Vec::new(), 1, 0);
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c.is_whitespace() {
            i += 1;
        } else if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    line += usize::from(chars[i] == '\n');
                    i += 1;
                }
            }
        } else if c == '"' || (c == 'r' && matches!(next, Some('"' | '#'))) || byte_str(&chars, i) {
            let (s, end, lines) = string(&chars, i);
            tokens.push((Token::Str(s), line));
            line += lines;
            i = end;
        } else if c == '\'' {
            i = quote(&chars, i);
        } else if c.is_alphanumeric() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            tokens.push((Token::Name(chars[start..i].iter().collect()), line));
        } else if c == ':' && next == Some(':') {
            tokens.push((Token::PathSep, line));
            i += 2;
        } else {
            tokens.push((Token::Punct(c), line));
            i += 1;
        }
    }
    tokens
}

/// Whether a byte string (`b"…"`, `br"…"`) starts at `i`.
fn byte_str(chars: &[char], i: usize) -> bool {
    chars[i] == 'b'
        && (chars.get(i + 1) == Some(&'"')
            || (chars.get(i + 1) == Some(&'r') && matches!(chars.get(i + 2), Some('"' | '#'))))
        && (i == 0 || !(chars[i - 1].is_alphanumeric() || chars[i - 1] == '_'))
}

/// The string literal starting at `i` (plain, raw or byte): its text, where it ends, and
/// how many line breaks it holds.
fn string(chars: &[char], mut i: usize) -> (String, usize, usize) {
    if chars[i] == 'b' {
        i += 1;
    }
    let raw = chars[i] == 'r';
    if raw {
        i += 1;
    }
    let mut hashes = 0;
    while chars[i] == '#' {
        hashes += 1;
        i += 1;
    }
    i += 1; // the opening quote
    let (start, mut lines) = (i, 0);
    loop {
        let c = chars[i];
        if !raw && c == '\\' {
            i += 2;
            continue;
        }
        if c == '"' && (0..hashes).all(|h| chars.get(i + 1 + h) == Some(&'#')) {
            let text = chars[start..i].iter().collect();
            return (text, i + 1 + hashes, lines);
        }
        lines += usize::from(c == '\n');
        i += 1;
    }
}

/// Past a character literal or a lifetime starting at the quote at `i`.
fn quote(chars: &[char], i: usize) -> usize {
    if chars.get(i + 1) == Some(&'\\') {
        let mut j = i + 2;
        while chars[j] != '\'' || j == i + 2 {
            j += 1;
        }
        return j + 1;
    }
    if chars.get(i + 2) == Some(&'\'') {
        return i + 3;
    }
    i + 1 // a lifetime: its name is read as a name
}

/// One source file of the crate: its module path (`["files", "layout"]`) and its tokens
/// outside test code.
struct Source {
    file: PathBuf,
    module: Vec<String>,
    tokens: Vec<(Token, usize)>,
}

/// Every file of `src/` that is not test code.
fn sources(src: &Path) -> Vec<Source> {
    let mut files = Vec::new();
    walk(src, &mut files);
    files.sort();
    let mut test_files = BTreeSet::new();
    let mut sources = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let (tokens, tests) = without_tests(lex(&text));
        let dir = file.parent().unwrap();
        let stem = file.file_stem().unwrap().to_str().unwrap();
        let own_dir = match stem {
            "mod" | "lib" | "main" => dir.to_owned(),
            _ => dir.join(stem),
        };
        for (name, path) in tests {
            test_files.insert(match path {
                Some(path) => dir.join(path),
                None => own_dir.join(format!("{name}.rs")),
            });
            test_files.insert(own_dir.join(&name).join("mod.rs"));
        }
        let relative = file.strip_prefix(src).unwrap();
        let mut module: Vec<String> = relative
            .iter()
            .map(|p| p.to_str().unwrap().trim_end_matches(".rs").to_owned())
            .collect();
        if matches!(
            module.last().map(String::as_str),
            Some("mod" | "lib" | "main")
        ) {
            module.pop();
        }
        sources.push(Source {
            file,
            module,
            tokens,
        });
    }
    sources.retain(|s| !test_files.contains(&s.file));
    sources
}

fn walk(dir: &Path, files: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            walk(&path, files);
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
}

/// `tokens` without the items under `#[cfg(test)]`, and the modules so declared in files
/// of their own (`mod tests;`, with the `#[path]` given if any).
#[allow(clippy::type_complexity)]
fn without_tests(
    tokens: Vec<(Token, usize)>,
) -> (Vec<(Token, usize)>, Vec<(String, Option<String>)>) {
    let (mut kept, mut modules, mut i) = (Vec::new(), Vec::new(), 0);
    let is = |i: usize, t: Token| tokens.get(i).map(|(t, _)| t) == Some(&t);
    let name = |s: &str| Token::Name(s.to_owned());
    while i < tokens.len() {
        let cfg_test = is(i, Token::Punct('#'))
            && is(i + 1, Token::Punct('['))
            && is(i + 2, name("cfg"))
            && is(i + 3, Token::Punct('('))
            && is(i + 4, name("test"))
            && is(i + 5, Token::Punct(')'))
            && is(i + 6, Token::Punct(']'));
        if !cfg_test {
            kept.push(tokens[i].clone());
            i += 1;
            continue;
        }
        // The item: further attributes, then everything to its `;` or its closing brace.
        let (mut j, mut path, mut depth) = (i + 7, None, 0);
        let mut last_name = None;
        while j < tokens.len() {
            match &tokens[j].0 {
                Token::Name(n) if n == "path" && depth == 0 => {
                    if let Some((Token::Str(s), _)) = tokens.get(j + 2) {
                        path = Some(s.clone());
                    }
                }
                Token::Name(n) => last_name = Some(n.clone()),
                Token::Punct('{') => depth += 1,
                Token::Punct('}') => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                Token::Punct(';') if depth == 0 => {
                    let is_mod = tokens[i + 7..j]
                        .iter()
                        .any(|(t, _)| *t == Token::Name("mod".to_owned()));
                    if let (true, Some(n)) = (is_mod, last_name.clone()) {
                        modules.push((n, path.clone()));
                    }
                    break;
                }
                _ => {}
            }
            j += 1;
        }
        i = j + 1;
    }
    (kept, modules)
}

/// The module paths (from the crate's root) that `source` names: `crate::a::b`,
/// `super::a`, and in braces `crate::{a, b::c}`. Each comes with its line.
/// A path that starts with the name of one of the module's own modules (`protocol::Kind` in
/// `report/mod.rs`) counts as one from `self`, when `modules` holds that module.
fn uses(source: &Source, modules: &BTreeSet<Vec<String>>) -> Vec<(Vec<String>, usize)> {
    let tokens = &source.tokens;
    let mut found = Vec::new();
    let mut i = 0;
    let child = |n: &str| {
        let mut path = source.module.clone();
        path.push(n.to_owned());
        modules.contains(&path)
    };
    while i < tokens.len() {
        // `x::crate` or `x::super` is no path from here.
        let preceded_by_sep = i > 0 && tokens[i - 1].0 == Token::PathSep;
        let base: Option<Vec<String>> = match &tokens[i].0 {
            Token::Name(n) if n == "crate" || (n == "crontap_run" && source.module.is_empty()) => {
                Some(Vec::new())
            }
            Token::Name(n) if n == "self" => Some(source.module.clone()),
            Token::Name(n) if child(n) => {
                // Read from here: the name is the path's first.
                let line = tokens[i].1;
                if !preceded_by_sep && tokens.get(i + 1).map(|t| &t.0) == Some(&Token::PathSep) {
                    for path in paths_after(tokens, i) {
                        let mut full = source.module.clone();
                        full.extend(path);
                        found.push((full, line));
                    }
                }
                i += 1;
                continue;
            }
            Token::Name(n) if n == "super" => {
                let mut up = 0;
                while matches!(&tokens.get(i + 2 * up).map(|t| &t.0), Some(Token::Name(n)) if n == "super")
                    && tokens.get(i + 2 * up + 1).map(|t| &t.0) == Some(&Token::PathSep)
                {
                    up += 1;
                }
                if up == 0 {
                    None
                } else {
                    // `super` is the module's parent (a `mod.rs` file's module is its
                    // folder's).
                    let keep = source.module.len().saturating_sub(up);
                    i += 2 * up - 2; // now at the last `super`
                    Some(source.module[..keep].to_vec())
                }
            }
            _ => None,
        };
        match base {
            Some(base)
                if !preceded_by_sep && tokens.get(i + 1).map(|t| &t.0) == Some(&Token::PathSep) =>
            {
                let line = tokens[i].1;
                for path in paths_after(tokens, i + 2) {
                    let mut full = base.clone();
                    full.extend(path);
                    found.push((full, line));
                }
                i += 2;
            }
            _ => i += 1,
        }
    }
    found
}

/// The paths that start at token `i`: `a::b::c`, or each one in `{a, b::{c, d}}`.
fn paths_after(tokens: &[(Token, usize)], i: usize) -> Vec<Vec<String>> {
    match tokens.get(i).map(|t| &t.0) {
        Some(Token::Name(n)) => {
            let mut rest = Vec::new();
            if tokens.get(i + 1).map(|t| &t.0) == Some(&Token::PathSep) {
                rest = paths_after(tokens, i + 2);
            }
            if rest.is_empty() {
                rest.push(Vec::new());
            }
            rest.into_iter()
                .map(|mut p| {
                    p.insert(0, n.clone());
                    p
                })
                .collect()
        }
        Some(Token::Punct('{')) => {
            let mut all = Vec::new();
            let (mut j, mut depth, mut start) = (i + 1, 1, true);
            while j < tokens.len() && depth > 0 {
                match &tokens[j].0 {
                    Token::Punct('{') => depth += 1,
                    Token::Punct('}') => depth -= 1,
                    Token::Punct(',') if depth == 1 => start = true,
                    Token::Name(_) if start && depth == 1 => {
                        all.extend(paths_after(tokens, j));
                        start = false;
                    }
                    _ => start = false,
                }
                j += 1;
            }
            all
        }
        _ => Vec::new(),
    }
}

/// The uses between top-level modules, each with where it is first made.
fn folder_graph(sources: &[Source]) -> BTreeMap<(String, String), String> {
    let tops: BTreeSet<&str> = sources
        .iter()
        .filter_map(|s| s.module.first().map(String::as_str))
        .collect();
    let mut edges = BTreeMap::new();
    for source in sources {
        let Some(from) = source.module.first() else {
            continue; // lib.rs declares the modules
        };
        for (path, line) in uses(source, &BTreeSet::new()) {
            let Some(to) = path.first() else { continue };
            if to != from && tops.contains(to.as_str()) {
                edges
                    .entry((from.clone(), to.clone()))
                    .or_insert_with(|| format!("{}:{line}", source.file.display()));
            }
        }
    }
    edges
}

/// The uses between files (named by their module path, `report::protocol`), each with
/// where it is first made. A folder's `mod.rs` is the folder's own face (its children
/// use what it declares, and it names theirs), so uses between it and its own files
/// do not count.
fn file_graph(sources: &[Source]) -> BTreeMap<(String, String), String> {
    let modules: BTreeSet<Vec<String>> = sources.iter().map(|s| s.module.clone()).collect();
    let mut edges = BTreeMap::new();
    for source in sources.iter().filter(|s| !s.module.is_empty()) {
        for (path, line) in uses(source, &modules) {
            let Some(to) = (1..=path.len())
                .rev()
                .map(|n| path[..n].to_vec())
                .find(|p| modules.contains(p))
            else {
                continue;
            };
            let parent_and_child =
                |a: &Vec<String>, b: &Vec<String>| a.len() + 1 == b.len() && b.starts_with(a);
            if to == source.module
                || parent_and_child(&to, &source.module)
                || parent_and_child(&source.module, &to)
            {
                continue;
            }
            edges
                .entry((source.module.join("::"), to.join("::")))
                .or_insert_with(|| format!("{}:{line}", source.file.display()));
        }
    }
    edges
}

/// The strongly connected groups of more than one node (Tarjan's algorithm).
fn cycles(edges: &BTreeSet<(String, String)>) -> Vec<Vec<String>> {
    let nodes: BTreeSet<&String> = edges.iter().flat_map(|(a, b)| [a, b]).collect();
    let nodes: Vec<&String> = nodes.into_iter().collect();
    let index_of = |n: &String| nodes.iter().position(|m| *m == n).unwrap();
    let mut next: Vec<Vec<usize>> = vec![Vec::new(); nodes.len()];
    for (a, b) in edges {
        next[index_of(a)].push(index_of(b));
    }
    struct Tarjan<'a> {
        next: &'a [Vec<usize>],
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        stack: Vec<usize>,
        on_stack: Vec<bool>,
        count: usize,
        groups: Vec<Vec<usize>>,
    }
    impl Tarjan<'_> {
        fn visit(&mut self, v: usize) {
            self.index[v] = Some(self.count);
            self.low[v] = self.count;
            self.count += 1;
            self.stack.push(v);
            self.on_stack[v] = true;
            for &w in &self.next[v].clone() {
                match self.index[w] {
                    None => {
                        self.visit(w);
                        self.low[v] = self.low[v].min(self.low[w]);
                    }
                    Some(iw) if self.on_stack[w] => self.low[v] = self.low[v].min(iw),
                    Some(_) => {}
                }
            }
            if Some(self.low[v]) == self.index[v] {
                let mut group = Vec::new();
                while let Some(w) = self.stack.pop() {
                    self.on_stack[w] = false;
                    group.push(w);
                    if w == v {
                        break;
                    }
                }
                if group.len() > 1 {
                    self.groups.push(group);
                }
            }
        }
    }
    let n = nodes.len();
    let mut t = Tarjan {
        next: &next,
        index: vec![None; n],
        low: vec![0; n],
        stack: Vec::new(),
        on_stack: vec![false; n],
        count: 0,
        groups: Vec::new(),
    };
    for v in 0..n {
        if t.index[v].is_none() {
            t.visit(v);
        }
    }
    let mut groups: Vec<Vec<String>> = t
        .groups
        .into_iter()
        .map(|g| {
            let mut names: Vec<String> = g.into_iter().map(|i| nodes[i].clone()).collect();
            names.sort();
            names
        })
        .collect();
    groups.sort();
    groups
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn no_import_cycle_between_the_folders_of_src() {
    let graph = folder_graph(&sources(&src()));
    for (from, to) in graph.keys() {
        println!("{from} -> {to}  ({})", graph[&(from.clone(), to.clone())]);
    }
    let all: BTreeSet<(String, String)> = graph.keys().cloned().collect();
    for group in cycles(&all) {
        println!("cycle today: {}", group.join(", "));
    }
    for (from, to, why) in ALLOWED {
        assert!(
            all.contains(&(from.to_string(), to.to_string())),
            "{from} no longer uses {to} ({why}): take it out of ALLOWED"
        );
    }
    let left: BTreeSet<(String, String)> = all
        .into_iter()
        .filter(|(a, b)| !ALLOWED.iter().any(|(f, t, _)| f == a && t == b))
        .collect();
    let cycles = cycles(&left);
    let shown: Vec<String> = cycles
        .iter()
        .map(|group| {
            let uses: Vec<String> = left
                .iter()
                .filter(|(a, b)| group.contains(a) && group.contains(b))
                .map(|(a, b)| format!("{a} -> {b} ({})", graph[&(a.clone(), b.clone())]))
                .collect();
            format!("{}: {}", group.join(" <-> "), uses.join("; "))
        })
        .collect();
    assert!(
        cycles.is_empty(),
        "folders of src/ that use each other in a circle: {shown:#?}"
    );
}

#[test]
fn the_files_in_a_cycle_are_only_those_listed() {
    let graph = file_graph(&sources(&src()));
    let all: BTreeSet<(String, String)> = graph.keys().cloned().collect();
    let found = cycles(&all);
    let shown: Vec<String> = found
        .iter()
        .map(|group| {
            let uses: Vec<String> = all
                .iter()
                .filter(|(a, b)| group.contains(a) && group.contains(b))
                .map(|(a, b)| format!("{a} -> {b} ({})", graph[&(a.clone(), b.clone())]))
                .collect();
            format!("{}:\n  {}", group.join(", "), uses.join("\n  "))
        })
        .collect();
    println!("{}", shown.join("\n"));
    let listed: Vec<Vec<String>> = FILE_CYCLES
        .iter()
        .map(|(group, _)| group.iter().map(|f| f.to_string()).collect())
        .collect();
    assert_eq!(
        found,
        listed,
        "the files of src/ that use each other in a circle are not FILE_CYCLES: break a new \
         cycle; when one is broken, or smaller, write FILE_CYCLES as it is now:\n{}",
        shown.join("\n")
    );
}

/// The reader of paths finds what it should, so the check above cannot pass by reading
/// nothing.
#[test]
fn the_reader_finds_uses_and_leaves_test_code_out() {
    let text = r#"
        //! crate::comment::ignored
        use crate::{alpha::{self, beta}, gamma};
        use super::super::delta::Thing;
        fn f() { let s = "crate::in_a_string"; let c = '{'; crate::epsilon::call(); }
        #[cfg(test)]
        mod tests { use crate::zeta; }
        #[cfg(test)]
        #[path = "other_tests.rs"]
        mod more;
    "#;
    let (tokens, tests) = without_tests(lex(text));
    assert_eq!(
        tests,
        vec![("more".to_owned(), Some("other_tests.rs".to_owned()))]
    );
    let source = Source {
        file: PathBuf::from("src/one/two/three.rs"),
        module: vec!["one".into(), "two".into(), "three".into()],
        tokens,
    };
    let found: Vec<String> = uses(&source, &BTreeSet::new())
        .into_iter()
        .map(|(p, _)| p.join("::"))
        .collect();
    assert_eq!(
        found,
        [
            "alpha::self",
            "alpha::beta",
            "gamma",
            "one::delta::Thing",
            "epsilon::call"
        ]
    );
}
