//! The documentation cannot drift from the binary: README.md, CONTRIBUTING.md,
//! bench/README.md, crates/scrub/README.md and docs/ are checked here.
//!
//! - `examples`: every ```` ```console ```` example runs, and prints what the document shows;
//! - `links`: every relative link and `#anchor` resolves;
//! - `options`: every `--option` on a crontap-run command line is in that command's `--help`;
//! - here: README.md stays short, and no table lists options (the reference is `--help`).
//!
//! CONTRIBUTING.md ("Documentation") says how to write an example these tests run.

mod examples;
mod links;
mod markdown;
mod options;

/// The README is a newcomer's page: the rest belongs in docs/, CONTRIBUTING.md or
/// bench/README.md.
#[test]
fn the_readme_is_short() {
    let readme = std::fs::read_to_string(markdown::root().join("README.md")).expect("README");
    let lines = readme.lines().count();
    assert!(lines <= 450, "README.md is {lines} lines; at most 450");
    assert!(
        readme.contains("cargo test --locked"),
        "README.md shows the test command"
    );
}

/// No table lists options with their meanings: `--help` and the man pages, made from the
/// clap definitions, are the reference, and a hand-written copy drifts from them. Such a
/// table is one whose header names options (`option`, `flag`) or meanings (`meaning`,
/// `description`) and whose rows mostly start with an option.
#[test]
fn no_table_lists_options() {
    let mut found = Vec::new();
    for doc in markdown::documents() {
        for (line, rows) in markdown::tables(&doc.text) {
            let Some((header, body)) = rows.split_first() else {
                continue;
            };
            let header = header.to_lowercase();
            let names = ["option", "flag", "meaning", "description"];
            let options = body.iter().filter(|row| row.starts_with("| `-")).count();
            if names.iter().any(|name| header.contains(name)) && options * 2 > body.len() {
                found.push(format!("{}:{line}", doc.path.display()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "tables of options (point to --help instead): {found:?}"
    );
}
