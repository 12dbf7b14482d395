//! crontap-run as root where another account (`nobody`) plants links and owns directories:
//! links planted at every path it writes (listed by `crontap_run::files::layout`, so a new
//! path is covered), state directories it must refuse, and a textfile collector directory
//! owned by another account. Giving files to another account takes root: these tests are
//! the group `root-tests`, which CI runs as root.

use std::fs;
use std::os::unix::fs::{MetadataExt, symlink};
use std::path::{Path, PathBuf};

use crontap_run::files::layout::{self, Area};

use crate::harness::{Crontap, Output, Receiver, chown, nobody};
use crate::planted::{JOB, KEY, chmod, run_in};

/// Gives the account `uid` read, write and search on the directory `dir` by an access ACL,
/// as `setfacl -m u:<uid>:rwx` would, leaving the owner's rwx and nothing for group and
/// others. The ACL is written as the kernel's `system.posix_acl_access` attribute: a
/// version (2) and entries of tag, permissions and id (acl(5); linux/posix_acl_xattr.h).
fn grant_write_by_acl(dir: &Path, uid: u32) {
    const USER_OBJ: u16 = 0x01;
    const USER: u16 = 0x02;
    const GROUP_OBJ: u16 = 0x04;
    const MASK: u16 = 0x10;
    const OTHER: u16 = 0x20;
    const NO_ID: u32 = u32::MAX;
    let mut value = 2u32.to_le_bytes().to_vec();
    for (tag, perm, id) in [
        (USER_OBJ, 7u16, NO_ID),
        (USER, 7, uid),
        (GROUP_OBJ, 0, NO_ID),
        (MASK, 7, NO_ID),
        (OTHER, 0, NO_ID),
    ] {
        value.extend_from_slice(&tag.to_le_bytes());
        value.extend_from_slice(&perm.to_le_bytes());
        value.extend_from_slice(&id.to_le_bytes());
    }
    let path = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: both strings are NUL-terminated and `value` outlives the call.
    let rc = unsafe {
        libc::setxattr(
            path.as_ptr(),
            c"system.posix_acl_access".as_ptr(),
            value.as_ptr().cast(),
            value.len(),
            0,
        )
    };
    assert_eq!(rc, 0, "setxattr: {}", std::io::Error::last_os_error());
}

/// A root-owned file outside crontap-run's directories that no run may change.
struct Victim {
    file: PathBuf,
    dir: PathBuf,
    mtime: i64,
}

impl Victim {
    fn new(root: &Path) -> Victim {
        let file = root.join("victim");
        fs::write(&file, "root's precious file\n").unwrap();
        chmod(&file, 0o644);
        let dir = root.join("victim-dir");
        fs::create_dir(&dir).unwrap();
        let mtime = fs::metadata(&file).unwrap().mtime();
        Victim { file, dir, mtime }
    }

    fn assert_untouched(&self, what: &str) {
        let meta = fs::metadata(&self.file).unwrap();
        assert_eq!(
            fs::read_to_string(&self.file).unwrap(),
            "root's precious file\n",
            "{what}: the victim file was changed"
        );
        assert_eq!(
            meta.mtime(),
            self.mtime,
            "{what}: the victim file was written"
        );
        assert_eq!(meta.mode() & 0o7777, 0o644, "{what}: its mode changed");
        assert_eq!(
            fs::read_dir(&self.dir).unwrap().count(),
            0,
            "{what}: something was created in the victim directory"
        );
    }
}

/// What is planted where crontap-run writes.
#[derive(Debug, Clone, Copy)]
enum Plant {
    /// A symbolic link to the victim (its file, or its directory).
    Link,
    /// A FIFO, which would hang a reader that opened it.
    Fifo,
    /// A second name of the victim file.
    HardLink,
    /// A plain file where a directory should be.
    File,
}

impl Plant {
    fn at(self, path: &Path, victim: &Victim, is_dir: bool) {
        match self {
            Plant::Link if is_dir => symlink(&victim.dir, path).unwrap(),
            Plant::Link => symlink(&victim.file, path).unwrap(),
            Plant::Fifo => {
                nix::unistd::mkfifo(path, nix::sys::stat::Mode::from_bits_truncate(0o666)).unwrap()
            }
            Plant::HardLink => fs::hard_link(&victim.file, path).unwrap(),
            Plant::File => fs::write(path, "not a directory").unwrap(),
        }
    }
}

/// A run that writes every path there is: a lock, a key (and so its record and a fencing
/// token), history and metrics.
fn full_run(receiver: &Receiver, state: &Path, metrics: &Path, marker: &Path) -> Output {
    Crontap::with_url(&receiver.url())
        .arg("--state-dir")
        .arg(state)
        .arg("--metrics-dir")
        .arg(metrics)
        .args(["--job", JOB, "--no-overlap", "--idempotency-key", KEY])
        .args(["--", "sh", "-c", "echo ran >> \"$0\""])
        .arg(marker)
        .run()
}

#[test]
fn a_link_planted_at_any_path_crontap_run_writes_is_never_followed() {
    let attacker = nobody();
    let every = layout::every_path(JOB, KEY);
    // The list itself must not lose a kind of file without anyone noticing.
    let names: Vec<String> = every.iter().map(|w| w.path.join("/")).collect();
    for expected in ["locks", "keys", "fencing", "history"] {
        assert!(
            names.iter().any(|n| n == expected),
            "{expected} in {names:?}"
        );
    }
    for suffix in [".lock", ".json", ".count", ".jsonl", ".prom"] {
        assert!(
            names.iter().any(|n| n.ends_with(suffix)),
            "{suffix} in {names:?}"
        );
    }
    let cases = every.into_iter().flat_map(|written| {
        let is_dir = written.path.len() == 1 && written.area == Area::State;
        let plants = match is_dir {
            true => vec![Plant::Link, Plant::File],
            false => vec![Plant::Link, Plant::Fifo, Plant::HardLink],
        };
        plants
            .into_iter()
            .map(move |plant| (written.clone(), plant, is_dir))
    });
    for (written, plant, is_dir) in cases {
        let tmp = tempfile::tempdir().unwrap();
        let victim = Victim::new(tmp.path());
        let state = tmp.path().join("state");
        fs::create_dir(&state).unwrap();
        chmod(&state, 0o700);
        // The collector's directory belongs to its own account, as node_exporter's does.
        let metrics = tmp.path().join("textfile");
        fs::create_dir(&metrics).unwrap();
        chown(&metrics, attacker);
        let base = match written.area {
            Area::State => &state,
            Area::Metrics => &metrics,
        };
        let (last, parents) = written.path.split_last().unwrap();
        let mut at = base.clone();
        for parent in parents {
            at = at.join(parent);
            fs::create_dir(&at).unwrap();
            chmod(&at, 0o700);
        }
        plant.at(&at.join(last), &victim, is_dir);
        let what = format!("{plant:?} at {}", written.path.join("/"));
        let receiver = Receiver::start();
        let marker = tmp.path().join("ran");
        // Twice: the second run finds what the first left.
        for round in 0..2 {
            let out = full_run(&receiver, &state, &metrics, &marker);
            victim.assert_untouched(&format!("{what}, run {round}"));
            // Moved aside, never followed, and the job runs as it would have.
            assert_eq!(out.code, 0, "{what}, run {round}: {out:?}");
            let runs = fs::read_to_string(&marker)
                .unwrap_or_default()
                .lines()
                .count();
            assert_eq!(runs, 1, "{what}, run {round}: the command ran {runs} times");
        }
        assert!(
            !receiver
                .received()
                .iter()
                .any(|r| r.target.contains("/fail")),
            "{what}: {:?}",
            receiver.received()
        );
    }
}

#[test]
fn a_state_directory_another_account_could_change_is_refused_before_the_command() {
    let other = nobody();
    let tmp = tempfile::tempdir().unwrap();
    let owned = tmp.path().join("owned-by-nobody");
    fs::create_dir(&owned).unwrap();
    chmod(&owned, 0o700);
    chown(&owned, other);
    let open = tmp.path().join("mode-0777");
    fs::create_dir(&open).unwrap();
    chmod(&open, 0o777);
    let sticky = tmp.path().join("mode-1777");
    fs::create_dir(&sticky).unwrap();
    chmod(&sticky, 0o1777);
    // A directory in it that another account made is no better.
    let inner = tmp.path().join("inner");
    fs::create_dir_all(inner.join("locks")).unwrap();
    chmod(&inner, 0o700);
    chown(&inner.join("locks"), other);
    // Group-writable for a group crontap-run is not in.
    let foreign = tmp.path().join("foreign-group");
    fs::create_dir(&foreign).unwrap();
    std::os::unix::fs::chown(&foreign, Some(0), Some(other.1)).unwrap();
    chmod(&foreign, 0o2775);
    // A directory of root's own, in one that another account owns: it could be swapped.
    let parent = tmp.path().join("parent-of-nobody");
    fs::create_dir(&parent).unwrap();
    chown(&parent, other);
    fs::create_dir(parent.join("state")).unwrap();
    chmod(&parent.join("state"), 0o700);
    // A link another account planted on the way, to a directory of root's.
    let victim = Victim::new(tmp.path());
    let shared = tmp.path().join("shared");
    fs::create_dir(&shared).unwrap();
    chown(&shared, other);
    symlink(&victim.dir, shared.join("link")).unwrap();
    // The state directory itself a link, named with a trailing slash or `/.`.
    let real = tmp.path().join("real");
    fs::create_dir(&real).unwrap();
    chmod(&real, 0o700);
    let linked = tmp.path().join("linked");
    symlink(&real, &linked).unwrap();
    // An ACL that lets another account write, on a directory whose mode alone is fine.
    let acl = tmp.path().join("acl");
    fs::create_dir(&acl).unwrap();
    chmod(&acl, 0o700);
    grant_write_by_acl(&acl, other.0);
    let slash = PathBuf::from(format!("{}/", linked.display()));
    let dot = linked.join(".");
    let cases = [
        (owned.clone(), owned.clone(), "is owned by uid"),
        (open.clone(), open.clone(), "mode 0777"),
        (sticky.clone(), sticky.clone(), "mode 1777"),
        (inner.clone(), inner.join("locks"), "is owned by uid"),
        (foreign.clone(), foreign.clone(), "written by the group"),
        (acl.clone(), acl.clone(), "access ACL"),
        (parent.join("state"), parent.clone(), "is owned by uid"),
        (shared.join("link/state"), shared.clone(), "is owned by uid"),
        (slash, linked.clone(), "symbolic link"),
        (dot, linked.clone(), "symbolic link"),
    ];
    for (dir, named, why) in cases {
        let receiver = Receiver::start();
        let marker = tmp.path().join("ran");
        let out = Crontap::with_url(&receiver.url())
            .arg("--state-dir")
            .arg(&dir)
            .args(["--job", JOB, "--no-overlap", "--", "touch"])
            .arg(&marker)
            .run();
        assert_eq!(out.code, 125, "{}: {out:?}", dir.display());
        assert!(!marker.exists(), "{}: the command ran", dir.display());
        let line = out
            .stderr
            .lines()
            .find(|l| l.contains(why))
            .unwrap_or_else(|| panic!("{}: no line saying {why:?}: {out:?}", dir.display()));
        assert!(
            line.contains(&named.display().to_string()),
            "the line names the directory: {line}"
        );
        let ping = receiver.only();
        assert!(ping.target.contains("/fail"), "{}", ping.target);
        assert!(ping.msg().unwrap().contains(why), "{:?}", ping.msg());
    }
    victim.assert_untouched("a link on the way to the state directory");
    assert_eq!(
        fs::read_dir(&real).unwrap().count(),
        0,
        "the linked directory was used"
    );
}

#[test]
fn a_metrics_directory_of_another_account_is_written_without_following_its_links() {
    let other = nobody();
    let tmp = tempfile::tempdir().unwrap();
    let victim = Victim::new(tmp.path());
    let metrics = tmp.path().join("textfile");
    fs::create_dir(&metrics).unwrap();
    chown(&metrics, other);
    chmod(&metrics, 0o755);
    // Links at the temporary names an older release used (pid-numbered), and at the file.
    for pid in 1..200 {
        let name = format!(".crontap-run-{JOB}.prom.{pid}.tmp");
        symlink(&victim.file, metrics.join(name)).unwrap();
    }
    let receiver = Receiver::start();
    for round in 0..2 {
        let out = run_in(
            &receiver,
            "--metrics-dir",
            &metrics,
            &["--job", JOB, "--", "true"],
        );
        assert_eq!(out.code, 0, "{out:?}");
        victim.assert_untouched(&format!("metrics, run {round}"));
        let file = metrics.join(layout::metrics(JOB));
        let text = fs::read_to_string(&file).unwrap();
        let count = format!(
            "crontap_run_runs_total{{job=\"{JOB}\",result=\"succeeded\"}} {}",
            round + 1
        );
        assert!(text.contains(&count), "{text}");
        assert_eq!(fs::metadata(&file).unwrap().mode() & 0o777, 0o644);
    }
    // Anyone who can read the directory can lock it: that must not stop the rewrite.
    let held = nix::fcntl::Flock::lock(
        fs::File::open(&metrics).unwrap(),
        nix::fcntl::FlockArg::LockExclusiveNonblock,
    )
    .unwrap();
    let out = run_in(
        &receiver,
        "--metrics-dir",
        &metrics,
        &["--job", JOB, "--", "true"],
    );
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stderr.is_empty(), "{out:?}");
    let text = fs::read_to_string(metrics.join(layout::metrics(JOB))).unwrap();
    assert!(text.contains("result=\"succeeded\"} 3"), "{text}");
    drop(held);
    // A link at the metrics file itself: replaced by the file, never written through.
    let file = metrics.join(layout::metrics(JOB));
    fs::remove_file(&file).unwrap();
    symlink(&victim.file, &file).unwrap();
    let out = run_in(
        &receiver,
        "--metrics-dir",
        &metrics,
        &["--job", JOB, "--", "true"],
    );
    assert_eq!(out.code, 0, "{out:?}");
    victim.assert_untouched("a link at the metrics file");
    assert!(!fs::symlink_metadata(&file).unwrap().is_symlink());
    // And a metrics directory that is itself a link is refused, the run unchanged.
    let linked = tmp.path().join("linked");
    symlink(&victim.dir, &linked).unwrap();
    let out = run_in(
        &receiver,
        "--metrics-dir",
        &linked,
        &["--job", JOB, "--", "true"],
    );
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stderr.contains("symbolic link"), "{out:?}");
    victim.assert_untouched("a linked metrics directory");
}
