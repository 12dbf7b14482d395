//! What [`Dir`] promises, on a real file system: no link followed, nothing overwritten in
//! place, nothing moved aside over another, and only trusted directories used.

use std::fs;
use std::io::Write;
use std::os::unix::fs::{MetadataExt, PermissionsExt, symlink};
use std::path::Path;

use super::*;

fn mode(path: &Path) -> u32 {
    fs::metadata(path).unwrap().permissions().mode() & 0o7777
}

fn private(path: &Path) -> Dir {
    Dir::open(path, Check::Private, true).unwrap().unwrap()
}

#[test]
fn directories_are_made_private_and_files_replaced_whole() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("a/b");
    let dir = private(&path);
    assert_eq!(mode(&path), 0o700);
    assert_eq!(mode(&tmp.path().join("a")), 0o700);
    let sub = dir.sub("locks", Check::Private, true).unwrap().unwrap();
    assert_eq!(mode(&path.join("locks")), 0o700);
    sub.replace("record.json", b"one", PRIVATE, true).unwrap();
    sub.replace("record.json", b"two", PRIVATE, true).unwrap();
    assert_eq!(fs::read(path.join("locks/record.json")).unwrap(), b"two");
    assert_eq!(mode(&path.join("locks/record.json")), 0o600);
    // No temporary file is left behind.
    assert_eq!(fs::read_dir(path.join("locks")).unwrap().count(), 1);
    fs::write(path.join("file"), "").unwrap();
    let err = Dir::open(&path.join("file"), Check::Private, true).unwrap_err();
    assert!(format!("{err:#}").contains("is not a directory"), "{err:#}");
    assert!(
        Dir::open(&path.join("absent"), Check::Private, false)
            .unwrap()
            .is_none()
    );
}

#[test]
fn no_link_is_followed() {
    let tmp = tempfile::tempdir().unwrap();
    let victim = tmp.path().join("victim");
    fs::write(&victim, "precious").unwrap();
    fs::create_dir(tmp.path().join("elsewhere")).unwrap();
    let dir = private(&tmp.path().join("state"));
    for name in ["read", "append", "lock", "replace"] {
        symlink(&victim, tmp.path().join("state").join(name)).unwrap();
    }
    symlink(tmp.path().join("elsewhere"), tmp.path().join("state/sub")).unwrap();
    let err = dir.read("read").unwrap_err();
    assert!(format!("{err:#}").contains("symbolic link"), "{err:#}");
    // Writing moves the link aside and makes a file of its own.
    dir.append("append", PRIVATE)
        .unwrap()
        .write_all(b"x")
        .unwrap();
    drop(dir.lock_file("lock", false).unwrap());
    for name in ["append", "lock"] {
        let path = tmp.path().join("state").join(name);
        assert!(fs::symlink_metadata(path).unwrap().is_file(), "{name}");
    }
    // Replacing renames over the link itself: the victim is untouched.
    dir.replace("replace", b"new", PRIVATE, false).unwrap();
    assert!(
        !fs::symlink_metadata(tmp.path().join("state/replace"))
            .unwrap()
            .is_symlink()
    );
    let err = Dir::open(&tmp.path().join("state/sub"), Check::Shared, false).unwrap_err();
    assert!(format!("{err:#}").contains("symbolic link"), "{err:#}");
    // Looking only, a link where a directory goes is refused; about to write there, it is
    // moved aside and a directory made.
    let err = dir.sub("sub", Check::Private, false).unwrap_err();
    assert!(format!("{err:#}").contains("symbolic link"), "{err:#}");
    dir.sub("sub", Check::Private, true).unwrap().unwrap();
    assert!(
        fs::symlink_metadata(tmp.path().join("state/sub"))
            .unwrap()
            .is_dir()
    );
    assert_eq!(fs::read_to_string(&victim).unwrap(), "precious");
    assert_eq!(
        fs::read_dir(tmp.path().join("elsewhere")).unwrap().count(),
        0
    );
}

#[test]
fn a_fifo_is_refused_not_waited_on() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = private(tmp.path());
    nix::unistd::mkfifo(&tmp.path().join("pipe"), Mode::from_bits_truncate(0o600)).unwrap();
    let err = dir.read("pipe").unwrap_err();
    assert!(format!("{err:#}").contains("not a regular file"), "{err:#}");
}

#[test]
fn temporary_names_are_new_every_time() {
    // A name already taken is not opened: another is drawn (the names' randomness is
    // tested in `random`).
    let tmp = tempfile::tempdir().unwrap();
    let dir = private(tmp.path());
    let (first, _) = dir.create_temp("x", PRIVATE).unwrap();
    let (second, _) = dir.create_temp("x", PRIVATE).unwrap();
    assert_ne!(first, second);
    assert!(layout::is_temp(&first), "{first}");
}

#[test]
fn files_moved_aside_in_the_same_second_are_all_kept() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = private(tmp.path());
    let mut aside = Vec::new();
    for n in 0..3 {
        dir.replace("record.json", format!("bad {n}").as_bytes(), PRIVATE, false)
            .unwrap();
        aside.push(dir.move_aside("record.json").unwrap());
    }
    let mut kept: Vec<String> = aside
        .iter()
        .map(|name| fs::read_to_string(tmp.path().join(name)).unwrap())
        .collect();
    kept.sort();
    assert_eq!(kept, ["bad 0", "bad 1", "bad 2"], "{aside:?}");
    assert!(!tmp.path().join("record.json").exists());
}

#[test]
fn a_lock_excludes_others_until_dropped_and_a_removed_file_is_not_trusted() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = private(tmp.path());
    let held = dir.lock_file("job.lock", false).unwrap().expect("free");
    assert!(dir.lock_file("job.lock", false).unwrap().is_none());
    assert!(dir.is_locked("job.lock").unwrap());
    // The holder prunes the file; a new claimant must lock the new file, not the old.
    dir.remove("job.lock").unwrap();
    let other = dir
        .lock_file("job.lock", false)
        .unwrap()
        .expect("the new file is free");
    assert!(dir.lock_file("job.lock", false).unwrap().is_none());
    drop((held, other));
    assert!(!dir.is_locked("job.lock").unwrap());
    assert!(!dir.is_locked("absent.lock").unwrap());
}

#[test]
fn a_directory_others_can_write_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let shared = tmp.path().join("shared");
    fs::create_dir(&shared).unwrap();
    fs::set_permissions(&shared, fs::Permissions::from_mode(0o777)).unwrap();
    let err = Dir::open(&shared, Check::Private, true).unwrap_err();
    assert!(format!("{err:#}").contains("mode 0777"), "{err:#}");
    // The same directory is fine as another program's (a textfile collector's).
    assert!(Dir::open(&shared, Check::Shared, false).unwrap().is_some());
    // A group-writable one (a Kubernetes fsGroup volume) is crontap-run's.
    fs::set_permissions(&shared, fs::Permissions::from_mode(0o2775)).unwrap();
    assert!(Dir::open(&shared, Check::Private, true).is_ok());
}

#[test]
fn an_odd_file_where_one_is_written_is_moved_aside_not_used() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = private(tmp.path());
    let victim = tmp.path().join("victim");
    fs::write(&victim, "precious").unwrap();
    nix::unistd::mkfifo(
        &tmp.path().join("fifo.lock"),
        Mode::from_bits_truncate(0o600),
    )
    .unwrap();
    symlink(&victim, tmp.path().join("link.jsonl")).unwrap();
    fs::hard_link(&victim, tmp.path().join("hard.jsonl")).unwrap();
    fs::create_dir(tmp.path().join("dir.json")).unwrap();
    drop(dir.lock_file("fifo.lock", false).unwrap().expect("free"));
    dir.append("link.jsonl", PRIVATE)
        .unwrap()
        .write_all(b"line\n")
        .unwrap();
    dir.append("hard.jsonl", PRIVATE)
        .unwrap()
        .write_all(b"line\n")
        .unwrap();
    dir.replace("dir.json", b"{}", PRIVATE, false).unwrap();
    assert_eq!(fs::read_to_string(&victim).unwrap(), "precious");
    for name in ["fifo.lock", "link.jsonl", "hard.jsonl", "dir.json"] {
        let meta = fs::symlink_metadata(tmp.path().join(name)).unwrap();
        assert!(meta.is_file() && meta.nlink() == 1, "{name}: {meta:?}");
        let aside = fs::read_dir(tmp.path())
            .unwrap()
            .flatten()
            .filter(|e| {
                e.file_name()
                    .to_string_lossy()
                    .starts_with(&format!("{name}.corrupt-"))
            })
            .count();
        assert_eq!(aside, 1, "{name} was not moved aside");
    }
}

#[test]
fn a_file_larger_than_any_crontap_run_writes_is_not_read() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = private(tmp.path());
    let file = fs::File::create(tmp.path().join("huge.prom")).unwrap();
    file.set_len(READ_MAX + 1).unwrap();
    let err = dir.read("huge.prom").unwrap_err();
    assert!(NotPlain::in_chain(&err), "{err:#}");
    file.set_len(READ_MAX).unwrap();
    assert_eq!(
        dir.read("huge.prom").unwrap().unwrap().len() as u64,
        READ_MAX
    );
}
