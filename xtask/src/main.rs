//! Build tasks for crontap-run, run with `cargo xtask <task>` (an alias in
//! `.cargo/config.toml`).
//!
//! `cargo xtask assets DIR` writes what the release packages ship besides the binary, all
//! generated from the clap definition in `src/cli.rs` so they can never disagree with
//! `--help`: `DIR/man/crontap-run.1` and `crontap-run-history.1`, and
//! `DIR/completions/crontap-run.bash`, `_crontap-run` (zsh) and `crontap-run.fish`.
//!
//! `cargo xtask formats` writes what is made from the scrubber's token format rows: the
//! table in `crates/scrub/README.md` and the fuzzing dictionary
//! `crates/scrub/fuzz/formats.dict` (see `formats.rs`). `cargo xtask formats --check`
//! writes nothing and fails when either is stale; CI runs it.

mod formats;

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::CommandFactory;
use clap_complete::Shell;
use crontap_run::cli::Cli;

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [task, dir] if task == "assets" => assets(Path::new(dir)),
        [task] if task == "formats" => formats::run(&root()?, false),
        [task, check] if task == "formats" && check == "--check" => formats::run(&root()?, true),
        _ => bail!("usage: cargo xtask assets DIR | cargo xtask formats [--check]"),
    }
}

/// The workspace's root, whatever the current directory.
fn root() -> Result<PathBuf> {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .context("xtask has no parent directory")
}

fn assets(dir: &Path) -> Result<()> {
    let man = dir.join("man");
    let completions = dir.join("completions");
    for sub in [&man, &completions] {
        std::fs::create_dir_all(sub).with_context(|| format!("cannot create {}", sub.display()))?;
    }
    // One page for crontap-run and one per subcommand (crontap-run-history.1, -check.1, -plan.1).
    clap_mangen::generate_to(Cli::command(), &man)
        .with_context(|| format!("cannot write man pages to {}", man.display()))?;
    let mut written: Vec<PathBuf> = Vec::new();
    for shell in [Shell::Bash, Shell::Zsh, Shell::Fish] {
        let path =
            clap_complete::generate_to(shell, &mut Cli::command(), "crontap-run", &completions)
                .with_context(|| format!("cannot write {shell} completions"))?;
        written.push(path);
    }
    for path in std::fs::read_dir(&man)?
        .flatten()
        .map(|e| e.path())
        .chain(written)
    {
        println!("{}", path.display());
    }
    Ok(())
}
