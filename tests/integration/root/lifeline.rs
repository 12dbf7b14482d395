//! The lifeline's descriptors, which only root may read (the lifeline is not dumpable).

use crate::harness::Crontap;

/// The lifeline (a run that holds state) holds none of the job's output pipes: it is forked
/// before they exist. A lifeline holding their write ends would keep crontap-run's copies
/// from seeing end-of-file until it exits, so the output would drain only because the
/// lifeline happens to be released first. The job itself looks: it finds its sibling, the
/// lifeline, among crontap-run's children and lists what that one has open. The lifeline is
/// not dumpable, so only root may read its descriptors; in a user namespace of its own an
/// ordinary user would be root there, but then `/` belongs to no account it knows and the
/// state directory is rightly refused. So this test is in the group `root-tests`.
#[test]
fn the_lifeline_holds_none_of_the_jobs_pipes() {
    assert!(
        nix::unistd::geteuid().is_root(),
        "the tests of the feature root-tests read another process's descriptors: run them \
         as root (CI does), or leave the feature out"
    );
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let script = r#"
        out=$(readlink /proc/$$/fd/1); err=$(readlink /proc/$$/fd/2)
        for child in $(cat /proc/$PPID/task/*/children); do
            [ "$child" = $$ ] && continue
            echo "sibling $child"
            for fd in /proc/$child/fd/*; do
                link=$(readlink "$fd") || { echo "unreadable $fd"; continue; }
                echo "open $link"
                case "$link" in "$out"|"$err") echo "holds the job's $link";; esac
            done
        done
    "#;
    let mut crontap = Crontap::new();
    crontap.args([
        "--no-overlap",
        "--job",
        "lifeline-fds",
        "--state-dir",
        &state.display().to_string(),
        "--",
        "sh",
        "-c",
        script,
    ]);
    let out = crontap.run();
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    // Exactly one sibling, whose descriptors were all read, the lifeline's own pipe among
    // them; none of them one of the job's pipes.
    let siblings = out
        .stdout
        .lines()
        .filter(|l| l.starts_with("sibling "))
        .count();
    assert_eq!(siblings, 1, "{}", out.stdout);
    assert!(out.stdout.contains("open pipe:["), "{}", out.stdout);
    assert!(!out.stdout.contains("unreadable"), "{}", out.stdout);
    assert!(!out.stdout.contains("holds the job's"), "{}", out.stdout);
}
