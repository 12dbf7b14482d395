//! `--header @PATH` as root where another account (`nobody`) owns the file, or a directory
//! or link on the way to it: refused, and root's own file never read through a planted
//! link. Giving files to another account takes root: these tests are the group
//! `root-tests`, which CI runs as root.

use std::fs;
use std::os::unix::fs::symlink;

use crate::harness::{chown, nobody};
use crate::healthchecks::header_files::{ROOTS, assert_refused, chmod, roots_file};
use crate::healthchecks::{healthchecks, server};

#[test]
fn a_link_planted_in_a_directory_another_account_owns_is_refused() {
    let other = nobody();
    let tmp = tempfile::tempdir().unwrap();
    let target = roots_file(tmp.path());
    let shared = tmp.path().join("shared");
    fs::create_dir(&shared).unwrap();
    chown(&shared, other);
    symlink(&target, shared.join("headers")).unwrap();
    std::os::unix::fs::lchown(shared.join("headers"), Some(other.0), Some(other.1)).unwrap();
    assert_refused(&shared.join("headers"), "is owned by");
}

/// A directory on the way that is a link another account made in a sticky directory
/// (`/tmp/hc -> /root` before the operator made `/tmp/hc`): sticky is safe for a directory
/// above, not for the one holding a link that is followed.
#[test]
fn a_directory_link_planted_in_a_sticky_directory_is_refused() {
    let other = nobody();
    let tmp = tempfile::tempdir().unwrap();
    let sticky = tmp.path().join("tmp");
    fs::create_dir(&sticky).unwrap();
    chmod(&sticky, 0o1777);
    let private = tmp.path().join("private");
    fs::create_dir(&private).unwrap();
    chmod(&private, 0o700);
    fs::write(private.join("headers"), format!("{ROOTS}\n")).unwrap();
    chmod(&private.join("headers"), 0o600);
    symlink(&private, sticky.join("hc")).unwrap();
    std::os::unix::fs::lchown(sticky.join("hc"), Some(other.0), Some(other.1)).unwrap();
    assert_refused(&sticky.join("hc/headers"), "mode 1777");
}

/// The link's target in a directory another account could change: it could be swapped.
#[test]
fn a_link_to_a_directory_another_account_owns_is_refused() {
    let other = nobody();
    let tmp = tempfile::tempdir().unwrap();
    let theirs = tmp.path().join("theirs");
    fs::create_dir(&theirs).unwrap();
    fs::write(theirs.join("headers"), "X-Token: tok-3456789\n").unwrap();
    chmod(&theirs.join("headers"), 0o600);
    chown(&theirs, other);
    let mine = tmp.path().join("mine");
    fs::create_dir(&mine).unwrap();
    chmod(&mine, 0o700);
    symlink(theirs.join("headers"), mine.join("headers")).unwrap();
    assert_refused(&mine.join("headers"), "is owned by");
}

#[test]
fn a_header_file_another_account_owns_is_refused() {
    let other = nobody();
    let tmp = tempfile::tempdir().unwrap();
    let theirs = tmp.path().join("theirs");
    fs::write(&theirs, "X-Token: tok-3456789\n").unwrap();
    chmod(&theirs, 0o600);
    chown(&theirs, other);
    assert_refused(&theirs, "neither root nor this user");
}

/// With headers to send, the URL file decides where their values go: one that another
/// account can change is refused like a header file. Without headers it is read as always.
#[test]
fn with_headers_the_url_file_must_be_trusted_too() {
    let other = nobody();
    let (hc, url) = server();
    let tmp = tempfile::tempdir().unwrap();
    let url_file = tmp.path().join("url");
    fs::write(&url_file, &url).unwrap();
    chmod(&url_file, 0o666);
    chown(&url_file, other);
    let with_headers = healthchecks("")
        .env_remove("CRONTAP_HEARTBEAT_URL")
        .arg("--url-file")
        .arg(&url_file)
        .args(["--header", "X-Token: tok-8765432"])
        .sh("echo the command ran");
    assert_eq!(with_headers.code, 125, "{}", with_headers.stderr);
    assert_eq!(with_headers.stdout, "");
    assert_eq!(
        with_headers.stderr.lines().count(),
        1,
        "{}",
        with_headers.stderr
    );
    assert!(
        with_headers.stderr.contains("--url-file") && with_headers.stderr.contains("--header"),
        "{}",
        with_headers.stderr
    );
    assert!(hc.pings().is_empty(), "{:#?}", hc.pings());

    let without = healthchecks("")
        .env_remove("CRONTAP_HEARTBEAT_URL")
        .arg("--url-file")
        .arg(&url_file)
        .sh("exit 0");
    assert_eq!(without.code, 0, "{}", without.stderr);
    assert_eq!(hc.ends().len(), 1, "{:#?}", hc.pings());
}
