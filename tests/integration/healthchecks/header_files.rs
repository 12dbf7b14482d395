//! `--header @PATH` as root where other accounts can write: what the file says is sent to
//! the heartbeat service, so neither the file nor the way to it may be another account's to
//! change. "Another account" is `nobody`; the tests run as root, as CI runs them.

use std::fs;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::Path;

use super::{healthchecks, server};
use crate::harness::{chown, nobody};

/// What root's own credentials file holds; it must never be sent or printed.
const ROOTS: &str = "db.internal: 5432:app:admin:PgPassw0rdSecret";

fn chmod(path: &Path, mode: u32) {
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
}

/// A file of root's, mode 0600, that parses as a header file: a planted link to it must
/// not turn it into one.
fn roots_file(dir: &Path) -> std::path::PathBuf {
    let private = dir.join("private");
    fs::create_dir(&private).unwrap();
    chmod(&private, 0o700);
    let file = private.join("pgpass");
    fs::write(&file, format!("{ROOTS}\n")).unwrap();
    chmod(&file, 0o600);
    file
}

/// Runs a healthchecks report with `--header @<at>`: refused with exit 125, one line
/// naming `--header` and `why`, the command not run, nothing sent, and root's file unread.
fn assert_refused(at: &Path, why: &str) {
    let (hc, url) = server();
    let out = healthchecks(&url)
        .arg("--header")
        .arg(format!("@{}", at.display()))
        .sh("echo the command ran");
    assert_eq!(out.code, 125, "{}: {}", at.display(), out.stderr);
    assert_eq!(out.stdout, "", "the command ran");
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
    assert!(
        out.stderr.contains("--header") && out.stderr.contains(why),
        "{}: expected {why:?} in {}",
        at.display(),
        out.stderr
    );
    assert!(!out.stderr.contains("PgPassw0rd"), "{}", out.stderr);
    assert!(hc.pings().is_empty(), "{:#?}", hc.pings());
}

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

#[test]
fn a_link_in_a_directory_everyone_can_write_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let target = roots_file(tmp.path());
    for mode in [0o777, 0o1777] {
        let open = tmp.path().join(format!("open-{mode:o}"));
        fs::create_dir(&open).unwrap();
        chmod(&open, mode);
        symlink(&target, open.join("headers")).unwrap();
        assert_refused(&open.join("headers"), &format!("mode {mode:04o}"));
    }
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
fn a_header_file_another_account_owns_or_can_write_is_refused() {
    let other = nobody();
    let tmp = tempfile::tempdir().unwrap();
    let theirs = tmp.path().join("theirs");
    fs::write(&theirs, "X-Token: tok-3456789\n").unwrap();
    chmod(&theirs, 0o600);
    chown(&theirs, other);
    assert_refused(&theirs, "neither root nor this user");
    let writable = tmp.path().join("writable");
    fs::write(&writable, "X-Token: tok-3456789\n").unwrap();
    chmod(&writable, 0o620);
    assert_refused(&writable, "writable by group or others");
    let fifo = tmp.path().join("fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    assert_refused(&fifo, "not a regular file");
}

/// A Kubernetes secret volume: the file is a link into a timestamped directory, through
/// the volume's `..data` link, all made by the kubelet (root) in a directory only root can
/// write, the file mode 0644 as the kubelet leaves it. Accepted, and its headers sent.
#[test]
fn a_kubernetes_secret_volume_is_accepted() {
    let tmp = tempfile::tempdir().unwrap();
    let volume = tmp.path().join("hc-headers");
    let stamped = volume.join("..2026_12_02_03_00_00.123456789");
    fs::create_dir_all(&stamped).unwrap();
    chmod(&volume, 0o755);
    chmod(&stamped, 0o755);
    fs::write(
        stamped.join("headers"),
        "CF-Access-Client-Secret: cf-kube-s3cret\n",
    )
    .unwrap();
    chmod(&stamped.join("headers"), 0o644);
    symlink("..2026_12_02_03_00_00.123456789", volume.join("..data")).unwrap();
    symlink("..data/headers", volume.join("headers")).unwrap();
    let (hc, url) = server();
    let out = healthchecks(&url)
        .arg("--header")
        .arg(format!("@{}", volume.join("headers").display()))
        .sh("echo ran");
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout, "ran\n");
    assert!(!out.stderr.contains("cf-kube-s3cret"), "{}", out.stderr);
    for ping in [hc.only_start(), hc.only_end()] {
        assert_eq!(
            ping.header("CF-Access-Client-Secret"),
            Some("cf-kube-s3cret")
        );
    }
}

/// Links that lead round in a circle end in an error, not a hang.
#[test]
fn a_loop_of_links_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("dir");
    fs::create_dir(&dir).unwrap();
    chmod(&dir, 0o700);
    symlink("b", dir.join("a")).unwrap();
    symlink("a", dir.join("b")).unwrap();
    assert_refused(&dir.join("a"), "symbolic links");
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
