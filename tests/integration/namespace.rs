//! Root without root: a test that needs a mount of its own (a tmpfs that fills up, a
//! read-only one) runs again inside a user and mount namespace of its own, where it is root
//! for those purposes, as rootless containers are. The same path is taken whoever runs the
//! tests, root or an ordinary user; only a kernel that refuses unprivileged user namespaces
//! makes such a test fail, saying so.
//!
//! Inside, crontap-run itself is started in a nested user namespace that maps the account
//! the tests run as to `nobody` (65534), the same number the kernel shows for every account
//! that is not mapped: so it sees `/`, `/tmp` and the test's own directories as its own,
//! exactly as that account sees them outside, and its checks of who owns a directory come
//! out as they would there.

use std::os::unix::process::CommandExt;
use std::process::Command;

/// What to look at when the kernel refuses (EPERM, ENOSPC, or a mount refused inside).
const HINT: &str = "a kernel that refuses unprivileged user namespaces: see sysctl \
     kernel.unprivileged_userns_clone, user.max_user_namespaces, and on Ubuntu \
     kernel.apparmor_restrict_unprivileged_userns";

/// Set in the re-run; its presence is how a test knows where it is.
const INSIDE: &str = "CRONTAP_TEST_NAMESPACE";

/// Whether this process is a test's re-run inside its namespace.
pub fn inside() -> bool {
    std::env::var_os(INSIDE).is_some()
}

/// Runs the test `name` of the module `module` (its `module_path!()`) again as root of a
/// user and mount namespace of its own. In the re-run this returns true and the test goes
/// on; in the first run it waits for the re-run, fails with its output unless it ran
/// exactly that one test and passed, and returns false.
pub fn rerun_as_root(module: &str, name: &str) -> bool {
    if inside() {
        return true;
    }
    let path = module.split_once("::").map_or("", |(_, rest)| rest);
    let test = format!("{path}::{name}");
    let mut rerun = Command::new(std::env::current_exe().expect("the test binary's path"));
    rerun
        .args(["--exact", &test, "--test-threads=1", "--nocapture"])
        .env(INSIDE, "1");
    let maps = Maps::new(0);
    // SAFETY: between fork and exec, `enter` makes only async-signal-safe calls (unshare,
    // mount, open, write, close) on memory prepared before the fork.
    unsafe { rerun.pre_exec(move || maps.enter(libc::CLONE_NEWUSER | libc::CLONE_NEWNS)) };
    let out = rerun.output().unwrap_or_else(|err| {
        panic!("cannot re-run {test} in a user and mount namespace of its own: {err}; {HINT}")
    });
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    print!("{stdout}");
    eprint!("{stderr}");
    assert!(
        out.status.success() && stdout.contains("test result: ok. 1 passed"),
        "{test}, re-run in a user and mount namespace of its own, did not pass: {}\n\
         {stderr}\n{HINT}",
        out.status
    );
    false
}

/// Makes `command` start in a user namespace of its own, nested in this one, as `nobody`
/// (65534) mapped to this process's account: see the module's header.
pub fn as_nobody(command: &mut Command) {
    let maps = Maps::new(65534);
    // SAFETY: as in `rerun_as_root`.
    unsafe { command.pre_exec(move || maps.enter(libc::CLONE_NEWUSER)) };
}

/// The ID maps that make this process's account `inner` in a new user namespace, written
/// out before the fork.
struct Maps {
    uid_map: Vec<u8>,
    gid_map: Vec<u8>,
}

impl Maps {
    fn new(inner: u32) -> Maps {
        let uid = nix::unistd::geteuid().as_raw();
        let gid = nix::unistd::getegid().as_raw();
        Maps {
            uid_map: format!("{inner} {uid} 1\n").into_bytes(),
            gid_map: format!("{inner} {gid} 1\n").into_bytes(),
        }
    }

    /// In the forked child: a new user namespace (and whatever else `flags` asks for), the
    /// maps written, and with a new mount namespace every mount made private to it.
    fn enter(&self, flags: libc::c_int) -> std::io::Result<()> {
        // SAFETY: plain system calls on valid, NUL-terminated strings.
        unsafe {
            if libc::unshare(flags) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            write_proc(c"/proc/self/setgroups", b"deny")?;
            write_proc(c"/proc/self/uid_map", &self.uid_map)?;
            write_proc(c"/proc/self/gid_map", &self.gid_map)?;
            if flags & libc::CLONE_NEWNS != 0 {
                let private = libc::MS_REC | libc::MS_PRIVATE;
                let none = std::ptr::null();
                if libc::mount(none, c"/".as_ptr(), none, private, std::ptr::null()) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
        }
        Ok(())
    }
}

/// Writes `data` to the file `path` of /proc in one call.
///
/// # Safety
/// Async-signal-safe; callable between fork and exec.
unsafe fn write_proc(path: &std::ffi::CStr, data: &[u8]) -> std::io::Result<()> {
    // SAFETY: `path` is NUL-terminated and `data` is valid for its length.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let written = libc::write(fd, data.as_ptr().cast(), data.len());
        let err = std::io::Error::last_os_error();
        libc::close(fd);
        if written != data.len() as isize {
            return Err(err);
        }
    }
    Ok(())
}
