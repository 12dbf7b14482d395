//! The documentation cannot drift from the binary: README.md, CONTRIBUTING.md,
//! bench/README.md, crates/scrub/README.md and docs/ are checked here.
//!
//! - `examples`: every ```` ```console ```` example runs, and prints what the document shows;
//! - `links`: every relative link and `#anchor` resolves;
//!
//! CONTRIBUTING.md ("Documentation") says how to write an example these tests run.

mod examples;
mod links;
mod markdown;

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
