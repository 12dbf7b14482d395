//! `cargo xtask formats [--check]`: the files made from the scrubber's token format rows
//! (`crontap_scrub::catalog`, the crate's `catalog` feature), so that a row added or changed
//! in `crates/scrub/src/formats/` shows up in both:
//!
//! - the table of formats in `crates/scrub/README.md`, between [`BEGIN`] and [`END`];
//! - the fuzzing dictionary `crates/scrub/fuzz/formats.dict`.
//!
//! With `--check`, nothing is written: it fails, naming each file that would change.

use std::collections::HashSet;
use std::fmt::Write as _;
use std::path::Path;

use anyhow::{Context, Result, anyhow, bail};
use crontap_scrub::catalog::{self, Format};

const README: &str = "crates/scrub/README.md";
const DICTIONARY: &str = "crates/scrub/fuzz/formats.dict";
const BEGIN: &str = "<!-- formats:begin (cargo xtask formats) -->";
const END: &str = "<!-- formats:end -->";
/// libFuzzer skips dictionary entries longer than this (its `Word` holds 64 bytes).
const MAX_ENTRY: usize = 64;

pub fn run(root: &Path, check: bool) -> Result<()> {
    let formats = catalog::formats().map_err(|e| anyhow!("a malformed format row: {e}"))?;
    let readme = std::fs::read_to_string(root.join(README))
        .with_context(|| format!("cannot read {README}"))?;
    let files = [
        (
            README,
            Some(readme.clone()),
            with_table(&readme, &table(&formats))?,
        ),
        (
            DICTIONARY,
            std::fs::read_to_string(root.join(DICTIONARY)).ok(),
            dictionary(&formats),
        ),
    ];
    let mut stale = Vec::new();
    for (name, old, new) in files {
        if old.as_deref() == Some(new.as_str()) {
            continue;
        }
        if check {
            let why = if old.is_some() { "stale" } else { "missing" };
            eprintln!("{name} is {why}: run `cargo xtask formats`");
            stale.push(name);
        } else {
            std::fs::write(root.join(name), new).with_context(|| format!("cannot write {name}"))?;
            println!("wrote {name}");
        }
    }
    if !stale.is_empty() {
        // A stale file is a finding, not an error of this program: no backtrace.
        eprintln!(
            "cargo xtask formats --check failed: {} must be made again from the {} format rows",
            stale.join(" and "),
            formats.len()
        );
        std::process::exit(1);
    }
    Ok(())
}

/// `readme` with the text between the markers replaced by `table`.
fn with_table(readme: &str, table: &str) -> Result<String> {
    let (Some(begin), Some(end)) = (readme.find(BEGIN), readme.find(END)) else {
        bail!("{README} has no {BEGIN} … {END} markers");
    };
    if end < begin {
        bail!("{README}: {END} comes before {BEGIN}");
    }
    let head = &readme[..begin + BEGIN.len()];
    Ok(format!("{head}\n{table}{}", &readme[end..]))
}

/// The table of formats, by vendor: `| Vendor | Token | Format | Documentation link |`.
fn table(formats: &[Format]) -> String {
    let mut rows: Vec<&Format> = formats.iter().collect();
    rows.sort_by_key(|f| (f.vendor.to_lowercase(), f.kind.to_lowercase()));
    let mut out = format!(
        "{} formats, by vendor:\n\n| Vendor | Token | Format | Documentation link |\n|---|---|---|---|\n",
        rows.len()
    );
    for f in rows {
        let link = match f.doc.strip_prefix("https://") {
            Some(rest) => format!("[{}]({})", rest.split('/').next().unwrap_or(rest), f.doc),
            None => cell(f.doc),
        };
        writeln!(
            out,
            "| {} | {} | {} | {link} |",
            cell(f.vendor),
            cell(f.kind),
            cell(&f.described)
        )
        .expect("writing to a String cannot fail");
    }
    out
}

/// `text` as one cell of a Markdown table.
fn cell(text: &str) -> String {
    text.replace('|', r"\|").replace('\n', " ")
}

/// The dictionary: every trigger, every literal piece of the templates, one token made
/// from each sample, and the marker; each once, in that order.
fn dictionary(formats: &[Format]) -> String {
    let mut out = format!(
        "# The fuzzing dictionary of crates/scrub/fuzz, in libFuzzer's syntax. Written by `cargo xtask\n\
         # formats` from the token format rows (crontap_scrub::catalog): every trigger, every\n\
         # literal piece of the rows' templates, one token made from each row's sample, and the\n\
         # marker. Do not edit it. libFuzzer skips entries over {MAX_ENTRY} bytes, so a longer\n\
         # sample is cut to its first {MAX_ENTRY}.\n"
    );
    let triggers = formats.iter().flat_map(|f| f.triggers.iter().copied());
    let literals = formats
        .iter()
        .flat_map(|f| f.literals.iter().copied())
        .filter(|l| l.len() > 1);
    let samples = formats.iter().map(|f| cut(&f.sample));
    let mut seen = HashSet::new();
    for entry in triggers
        .chain(literals)
        .chain(samples)
        .chain([crontap_scrub::REDACTED])
    {
        if !entry.is_empty() && seen.insert(entry) {
            out.push('"');
            out.push_str(&escape(entry.as_bytes()));
            out.push_str("\"\n");
        }
    }
    out
}

/// The first [`MAX_ENTRY`] bytes of `text`, or fewer to end on a character.
fn cut(text: &str) -> &str {
    &text[..crontap_scrub::text::floor_char_boundary(text, MAX_ENTRY)]
}

/// `bytes` for between the quotes of a dictionary entry: printable ASCII as it is, `\` and
/// `"` escaped by a backslash, every other byte as `\xNN`.
fn escape(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for &b in bytes {
        match b {
            b'\\' | b'"' => {
                out.push('\\');
                out.push(char::from(b));
            }
            b' '..=b'~' => out.push(char::from(b)),
            _ => write!(out, "\\x{b:02X}").expect("writing to a String cannot fail"),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes() {
        assert_eq!(escape(br#"a"b\c"#), r#"a\"b\\c"#);
        assert_eq!(escape("é\n".as_bytes()), r"\xC3\xA9\x0A");
    }

    #[test]
    fn table_between_markers() {
        let readme = format!("intro\n{BEGIN}\nold\n{END}\nrest\n");
        assert_eq!(
            with_table(&readme, "new\n").unwrap(),
            format!("intro\n{BEGIN}\nnew\n{END}\nrest\n")
        );
        assert!(with_table("no markers", "x").is_err());
    }

    #[test]
    fn long_samples_are_cut_on_a_character() {
        let long = "é".repeat(40);
        assert_eq!(cut(&long).len(), 64);
        assert_eq!(cut("short"), "short");
    }
}
