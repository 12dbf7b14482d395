//! Starting the command's program as `execvp(3)` does, whichever C library crontap-run is
//! linked with.
//!
//! std's `Command` does everything up to the exec (the output pipes, the process group, the
//! hooks of [`supervise`](crate::run::supervise)) and then calls the C library's `execvp`,
//! whose rules differ: musl's, in the static release build, refuses a script without a `#!`
//! line (ENOEXEC, exit 126) where glibc's, cron's `/bin/sh`, `env` and `timeout` run it with
//! `/bin/sh`. [`spawn`] adds a last hook that does the exec itself, by glibc's rules, so a
//! crontab line runs the same with `crontap-run --` in front of it:
//!
//! - a name with a `/` is executed as it is; an empty name is not found (ENOENT);
//! - any other name is tried in each `PATH` element in order (the child's `PATH`; if it is
//!   unset, the C library's default), an empty element meaning the current directory. An
//!   element where the file is missing or which is not a directory (ENOENT, ENOTDIR, and
//!   the network-filesystem errors ESTALE, ENODEV, ETIMEDOUT) is skipped, and so is one
//!   that denies it (EACCES), which is what is reported (126) if no later element has it;
//!   any other error ends the search and is reported;
//! - a file the kernel does not know how to run (ENOEXEC) is run as `/bin/sh <file>
//!   <args…>`, with the path it was found at, in the same process: same group, signals,
//!   environment and output.
//!
//! The program's `argv[0]` is the name as the user wrote it (the shell's `$0` is the file's
//! path, as with glibc). Everything the hook needs is built before the fork; between fork
//! and exec it only calls `execve(2)`.

use std::ffi::{CStr, CString, OsStr, c_char};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command};

use nix::errno::Errno;

/// The shell that runs a file the kernel refuses with ENOEXEC (glibc's `_PATH_BSHELL`).
const SHELL: &CStr = c"/bin/sh";

/// Where a name is looked for when the child has no `PATH`: the C library's default, so
/// each build does what its own `execvp` would.
#[cfg(target_env = "musl")]
const DEFAULT_PATH: &[u8] = b"/usr/local/bin:/bin:/usr/bin";
#[cfg(not(target_env = "musl"))]
const DEFAULT_PATH: &[u8] = b"/bin:/usr/bin";

/// The longest name that is looked up in `PATH` (a file name, `NAME_MAX`).
const NAME_MAX: usize = 255;

/// Spawns `command` with its program found and executed by the rules above, with `env` as
/// its whole environment. `command` is configured as for [`Command::spawn`] (program,
/// arguments, stdio, process group, other hooks); its own environment settings and `arg0`
/// are not used.
pub fn spawn<V: AsRef<OsStr>>(command: &mut Command, env: &[(&OsStr, V)]) -> io::Result<Child> {
    let mut exec = Exec::new(command, env)?;
    // SAFETY: the hook runs in the child between fork and exec (after the other hooks), where
    // crontap-run's other threads are gone and may have held the allocator's lock: it only
    // calls execve(2), reads errno and makes an io::Error of it (a number, not allocated),
    // on strings and pointer arrays built before the fork. (nix's execve is not used: it
    // builds its pointer arrays at the call, that is, allocates.)
    unsafe {
        command.pre_exec(move || Err(exec.run()));
    }
    command.spawn()
}

/// The prepared exec: every string and pointer array the child needs.
struct Exec {
    /// The files to try, in order: the name itself when it has a slash, else one per `PATH`
    /// element.
    files: Vec<CString>,
    /// Whether `files` came from a `PATH` search (errors then move on to the next one).
    searched: bool,
    /// The program's argv, null-terminated; points into `strings`.
    argv: Vec<*const c_char>,
    /// `/bin/sh`'s argv for an ENOEXEC file: the shell, a slot for the file, the command's
    /// arguments, null.
    shell_argv: Vec<*const c_char>,
    /// The child's environment as `NAME=value`, null-terminated; points into `strings`.
    envp: Vec<*const c_char>,
    /// Owns what `argv` and `envp` point to (a `CString`'s bytes do not move with it).
    _strings: Vec<CString>,
}

// SAFETY (Send): the raw pointers point into the heap buffers of `files` and `_strings`,
// which `Exec` owns and never changes, so they stay valid wherever the value moves; it is
// moved into the hook and used only there, in the child.
unsafe impl Send for Exec {}
// SAFETY (Sync): `pre_exec` asks for it, but nothing reads an `Exec` through a shared
// reference: the hook is called through `&mut` (FnMut), once, in the child, and the only
// writes (`run`, `execve`) take `&mut self`.
unsafe impl Sync for Exec {}

impl Exec {
    fn new<V: AsRef<OsStr>>(command: &Command, env: &[(&OsStr, V)]) -> io::Result<Exec> {
        let name = command.get_program().as_bytes();
        if name.is_empty() {
            return Err(Errno::ENOENT.into());
        }
        let searched = !name.contains(&b'/');
        let files = if searched {
            if name.len() > NAME_MAX {
                return Err(Errno::ENAMETOOLONG.into());
            }
            let path = env
                .iter()
                .find(|(n, _)| *n == "PATH")
                .map(|(_, p)| p.as_ref().as_bytes());
            candidates(path.unwrap_or(DEFAULT_PATH), name)
                .map(|parts| c_string(&parts))
                .collect::<io::Result<_>>()?
        } else {
            vec![c_string(&[name])?]
        };

        let mut strings = Vec::new();
        let mut own = |parts: &[&[u8]]| -> io::Result<*const c_char> {
            let s = c_string(parts)?;
            let ptr = s.as_ptr();
            strings.push(s);
            Ok(ptr)
        };
        let program = own(&[name])?;
        let args = command
            .get_args()
            .map(|arg| own(&[arg.as_bytes()]))
            .collect::<io::Result<Vec<_>>>()?;
        let mut envp = Vec::with_capacity(env.len() + 1);
        for (name, value) in env {
            envp.push(own(&[name.as_bytes(), b"=", value.as_ref().as_bytes()])?);
        }
        let null = std::ptr::null();
        envp.push(null);
        let mut argv = vec![program];
        argv.extend(&args);
        argv.push(null);
        // The file's slot is filled in when the kernel refuses it.
        let mut shell_argv = vec![SHELL.as_ptr(), null];
        shell_argv.extend(&args);
        shell_argv.push(null);
        Ok(Exec {
            files,
            searched,
            argv,
            shell_argv,
            envp,
            _strings: strings,
        })
    }

    /// In the child: executes the program, or returns why it could not be.
    fn run(&mut self) -> io::Error {
        if !self.searched {
            return self.execve(0).into();
        }
        let mut denied = false;
        let mut last = Errno::ENOENT;
        for i in 0..self.files.len() {
            last = self.execve(i);
            match last {
                Errno::EACCES => denied = true,
                Errno::ENOENT
                | Errno::ENOTDIR
                | Errno::ESTALE
                | Errno::ENODEV
                | Errno::ETIMEDOUT => {}
                found => return found.into(),
            }
        }
        if denied { Errno::EACCES } else { last }.into()
    }

    /// Executes `files[i]`, with `/bin/sh` if the kernel refuses it with ENOEXEC; returns
    /// the error of the last attempt.
    fn execve(&mut self, i: usize) -> Errno {
        let file = self.files[i].as_ptr();
        // SAFETY: `file` is a C string and both arrays are null-terminated arrays of C
        // strings, all owned by `self`, which outlives the call; execve reads them only.
        unsafe { libc::execve(file, self.argv.as_ptr(), self.envp.as_ptr()) };
        let refused = Errno::last();
        if refused != Errno::ENOEXEC {
            return refused;
        }
        self.shell_argv[1] = file;
        // SAFETY: as above.
        unsafe { libc::execve(SHELL.as_ptr(), self.shell_argv.as_ptr(), self.envp.as_ptr()) };
        Errno::last()
    }
}

/// The files `execvp` tries for `name` along `path`: each element, a slash, the name; an
/// empty element gives the name alone, relative to the current directory.
/// Each file comes in its three parts (directory, slash, name) for [`c_string`] to join.
fn candidates<'a>(path: &'a [u8], name: &'a [u8]) -> impl Iterator<Item = [&'a [u8]; 3]> + 'a {
    path.split(|&b| b == b':')
        .map(move |dir| match dir.is_empty() {
            true => [dir, b"", name],
            false => [dir, b"/", name],
        })
}

/// The C string of `parts` joined.
fn c_string(parts: &[&[u8]]) -> io::Result<CString> {
    // Room for the terminating nul too, so that making the C string copies nothing again.
    let mut bytes = Vec::with_capacity(parts.iter().map(|p| p.len()).sum::<usize>() + 1);
    for part in parts {
        bytes.extend_from_slice(part);
    }
    CString::new(bytes).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            "nul byte found in provided data",
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tried(path: &str, name: &str) -> Vec<String> {
        candidates(path.as_bytes(), name.as_bytes())
            .map(|parts| String::from_utf8(parts.concat()).unwrap())
            .collect()
    }

    #[test]
    fn path_elements_in_order_and_empty_ones_are_the_current_directory() {
        assert_eq!(tried("/usr/bin:/bin", "ls"), ["/usr/bin/ls", "/bin/ls"]);
        assert_eq!(tried("", "ls"), ["ls"]);
        assert_eq!(tried(":/bin", "ls"), ["ls", "/bin/ls"]);
        assert_eq!(tried("/a::/b:", "ls"), ["/a/ls", "ls", "/b/ls", "ls"]);
        assert_eq!(tried("/a/", "ls"), ["/a//ls"]);
    }
}
