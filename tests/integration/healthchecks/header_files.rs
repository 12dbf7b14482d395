//! `--header @PATH` as root where other accounts can write: what the file says is sent to
//! the heartbeat service, so neither the file nor the way to it may be another account's to
//! change. The tests where another account (`nobody`) owns the file or a directory on the
//! way are in `root/header_files.rs` (the group `root-tests`).

use std::fs;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::Path;

use super::{healthchecks, server};

/// What root's own credentials file holds; it must never be sent or printed.
pub(crate) const ROOTS: &str = "db.internal: 5432:app:admin:PgPassw0rdSecret";

pub(crate) fn chmod(path: &Path, mode: u32) {
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
}

/// A file of root's, mode 0600, that parses as a header file: a planted link to it must
/// not turn it into one.
pub(crate) fn roots_file(dir: &Path) -> std::path::PathBuf {
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
pub(crate) fn assert_refused(at: &Path, why: &str) {
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

#[test]
fn a_header_file_others_can_write_or_that_is_not_a_file_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
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
