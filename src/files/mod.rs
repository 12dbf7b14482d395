//! Every file crontap-run opens in its own directories: the state directory (locks, keys,
//! fencing counters, history) and the metrics directory. Nothing else in crontap-run opens,
//! creates, renames or removes a file there.
//!
//! crontap-run often runs as root in a directory other accounts can write (node_exporter's
//! textfile directory, a path under `/tmp`). So a directory is opened once, by a handle
//! ([`Dir`]), and everything in it is reached relative to that handle, one name at a time
//! (`openat(2)` and friends, from `nix`, which crontap-run already uses for signals and
//! processes; `rustix` would do the same and would be a second crate for it):
//! - No symbolic link is followed, for a file or for a directory inside ours
//!   (`O_NOFOLLOW`), and only regular files are read or written: a planted FIFO or device
//!   is refused, never opened for real (`O_NONBLOCK` on the open, then a type check).
//! - A file that replaces another is written to a new file created exclusively (`O_EXCL`)
//!   under a name no one can guess (random bytes from the kernel), then renamed into place.
//! - A file moved aside never replaces another: it is linked to a free name (`linkat(2)`
//!   fails rather than overwrite) before the old name is removed.
//! - The state directory, and each directory in it, is trusted only as OpenSSH's
//!   StrictModes would ([`trust`]).
//!
//! [`layout`] names every path crontap-run writes, which is what the tests enumerate.

pub mod layout;
mod lock;
mod parents;
mod plain;
mod secret;
mod times;
pub mod trust;

use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use nix::errno::Errno;
use nix::fcntl::OFlag;
use nix::sys::stat::{FileStat, Mode, SFlag};
use nix::unistd::UnlinkatFlags;

use crate::sanitize;
pub use plain::NotPlain;
pub use secret::read_secret;
pub use times::{may_judge, modified, touch};
use trust::Role;

/// Flags of every file opened here.
const FILE: OFlag = OFlag::O_NOFOLLOW
    .union(OFlag::O_CLOEXEC)
    .union(OFlag::O_NONBLOCK)
    .union(OFlag::O_NOCTTY);
/// Flags of every directory opened here.
const DIRECTORY: OFlag = OFlag::O_DIRECTORY
    .union(OFlag::O_NOFOLLOW)
    .union(OFlag::O_CLOEXEC)
    .union(OFlag::O_RDONLY);

/// The most [`Dir::read`] reads: a history is trimmed at 512 KiB, and a record, a counter
/// or a metrics file takes a few hundred bytes.
pub const READ_MAX: u64 = 16 << 20;

/// The mode of files only crontap-run reads (state), and of those others read (metrics).
pub const PRIVATE: u32 = 0o600;
pub const READABLE: u32 = 0o644;

/// An open directory of crontap-run's: its handle, and its path for messages only.
#[derive(Debug)]
pub struct Dir {
    fd: OwnedFd,
    shown: PathBuf,
}

/// How carefully a directory is checked before it is used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Check {
    /// crontap-run's own (the state directory and those in it): see [`trust::check`].
    Private,
    /// Another program's, shared by design (a textfile collector directory): used whoever
    /// owns it, with the same care for what is in it.
    Shared,
}

impl Dir {
    /// Opens the directory at `path`, which must not be a symbolic link itself. With
    /// `create`, a missing directory is made 0700 (its missing parents too, as
    /// `mkdir -p -m 0700`). `None` when it is missing and not to be created.
    pub fn open(path: &Path, check: Check, create: bool) -> Result<Option<Dir>> {
        let shown = path.to_owned();
        // Plain, so that `dir/` or `dir/.` cannot open what a link named `dir` points to.
        let path = &parents::plain(path)?;
        if check == Check::Private && !parents::approach(path, create, trust::Runner::this())? {
            return Ok(None);
        }
        let fd = match nix::fcntl::open(path, DIRECTORY, Mode::empty()) {
            Ok(fd) => fd,
            Err(Errno::ENOENT) if !create => return Ok(None),
            Err(errno) => {
                let link = std::fs::symlink_metadata(path).is_ok_and(|m| m.is_symlink());
                return Err(refusal(path, errno, link));
            }
        };
        let dir = Dir { fd, shown };
        dir.checked(check)?;
        Ok(Some(dir))
    }

    /// The directory `name` in this one, checked as `check` says; made 0700 when missing
    /// and `create`. `None` when it is missing and not to be created.
    pub fn sub(&self, name: &str, check: Check, create: bool) -> Result<Option<Dir>> {
        // Where a directory of crontap-run's should be, a link or a file (planted, or left
        // by a restore) is moved aside, so that it never blocks a job for good.
        let odd = |stat: FileStat| !is(&stat, SFlag::S_IFDIR);
        if create && self.stat(name).is_ok_and(|stat| stat.is_some_and(odd)) {
            let aside = self.move_aside(name)?;
            tracing::warn!(
                "{} was not a directory; moved it to {} and made one",
                self.shown_of(name),
                self.shown_of(&aside)
            );
        }
        let shown = self.shown.join(name);
        if create {
            match nix::sys::stat::mkdirat(&self.fd, name, Mode::from_bits_truncate(0o700)) {
                Ok(()) | Err(Errno::EEXIST) => {}
                Err(errno) => {
                    return Err(io::Error::from(errno))
                        .with_context(|| format!("cannot create {}", show(&shown)));
                }
            }
        }
        let fd = match nix::fcntl::openat(&self.fd, name, DIRECTORY, Mode::empty()) {
            Ok(fd) => fd,
            Err(Errno::ENOENT) if !create => return Ok(None),
            Err(errno) => {
                let link = self
                    .stat(name)
                    .is_ok_and(|s| s.is_some_and(|s| is(&s, SFlag::S_IFLNK)));
                return Err(refusal(&shown, errno, link));
            }
        };
        let dir = Dir { fd, shown };
        dir.checked(check)?;
        Ok(Some(dir))
    }

    fn checked(&self, check: Check) -> Result<()> {
        if check == Check::Private {
            let stat = nix::sys::stat::fstat(&self.fd)
                .map_err(io::Error::from)
                .with_context(|| format!("cannot read {}", self.shown()))?;
            let acl = trust::has_acl(&self.fd);
            if let Err(why) = trust::check(&stat, acl, trust::Runner::this(), Role::Own) {
                bail!("{} {why}", self.shown());
            }
        }
        Ok(())
    }

    /// The directory's path, on one line, for messages.
    pub fn shown(&self) -> String {
        show(&self.shown)
    }

    /// The path of `name` in this directory, for messages.
    pub fn shown_of(&self, name: &str) -> String {
        show(&self.shown.join(name))
    }

    /// Opens the regular file `name`; `None` when there is none.
    fn open_file(&self, name: &str, flags: OFlag, mode: u32) -> io::Result<Option<File>> {
        let fd = match nix::fcntl::openat(
            &self.fd,
            name,
            flags | FILE,
            Mode::from_bits_truncate(mode),
        ) {
            Ok(fd) => fd,
            Err(Errno::ENOENT) if !flags.contains(OFlag::O_CREAT) => return Ok(None),
            Err(Errno::ELOOP) => return Err(NotPlain::Link.into()),
            // A directory opened for writing.
            Err(Errno::EISDIR) => return Err(NotPlain::Other.into()),
            Err(errno) => return Err(errno.into()),
        };
        let stat = nix::sys::stat::fstat(&fd)?;
        if !is(&stat, SFlag::S_IFREG) {
            return Err(NotPlain::Other.into());
        }
        // Written through, a second name would change a file elsewhere.
        let writes = flags.intersects(OFlag::O_WRONLY | OFlag::O_RDWR);
        if writes && stat.st_nlink > 1 {
            return Err(NotPlain::HardLinked.into());
        }
        Ok(Some(File::from(fd)))
    }

    /// [`Dir::open_file`] for writing; a link, a FIFO, a directory or a hard-linked file
    /// found at `name` (planted, or left by a restore) is moved aside, with one warning,
    /// and a plain file made: it must not block the job for good.
    fn open_plain(&self, name: &str, flags: OFlag, mode: u32) -> io::Result<File> {
        let flags = flags | OFlag::O_CREAT;
        match self.open_file(name, flags, mode) {
            Err(err) if NotPlain::of(&err).is_some() => {
                let aside = self.move_aside(name).map_err(io::Error::other)?;
                tracing::warn!(
                    "{} was not a plain file ({err}); moved it to {} and made a new one",
                    self.shown_of(name),
                    self.shown_of(&aside)
                );
                let file = self.open_file(name, flags, mode)?;
                Ok(file.expect("O_CREAT makes the file"))
            }
            opened => Ok(opened?.expect("O_CREAT makes the file")),
        }
    }

    /// What the file `name` holds; `None` when there is none. A file larger than
    /// [`READ_MAX`] is refused unread (nothing crontap-run writes comes near it).
    pub fn read(&self, name: &str) -> Result<Option<Vec<u8>>> {
        self.read_at_most(name, READ_MAX)
    }

    /// [`Dir::read`] of a file that should hold at most `max` bytes: a larger one is
    /// refused after `max + 1` bytes read.
    pub fn read_at_most(&self, name: &str, max: u64) -> Result<Option<Vec<u8>>> {
        let read = || -> io::Result<Option<Vec<u8>>> {
            let Some(file) = self.open_file(name, OFlag::O_RDONLY, 0)? else {
                return Ok(None);
            };
            let mut bytes = Vec::new();
            file.take(max + 1).read_to_end(&mut bytes)?;
            if bytes.len() as u64 > max {
                return Err(NotPlain::TooLarge.into());
            }
            Ok(Some(bytes))
        };
        read().with_context(|| format!("cannot read {}", self.shown_of(name)))
    }

    /// Opens `name` for appending, creating it with `mode`.
    pub fn append(&self, name: &str, mode: u32) -> Result<File> {
        self.open_plain(name, OFlag::O_WRONLY | OFlag::O_APPEND, mode)
            .with_context(|| format!("cannot open {}", self.shown_of(name)))
    }

    /// Replaces `name` with `contents`: written to a new file of an unguessable name,
    /// created exclusively with `mode`, then renamed over `name`. `durable` also syncs the
    /// file and the directory, so that a crash leaves the old contents or the new, whole.
    pub fn replace(&self, name: &str, contents: &[u8], mode: u32, durable: bool) -> Result<()> {
        let (temp, mut file) = self
            .create_temp(name, mode)
            .with_context(|| format!("cannot write {}", self.shown_of(name)))?;
        let written = (|| -> io::Result<()> {
            file.write_all(contents)?;
            if durable {
                file.sync_all()?;
            }
            match nix::fcntl::renameat(&self.fd, temp.as_str(), &self.fd, name) {
                // A directory there: moved aside, as any odd file is.
                Err(Errno::EISDIR | Errno::ENOTEMPTY | Errno::EEXIST) => {
                    self.move_aside(name).map_err(io::Error::other)?;
                    nix::fcntl::renameat(&self.fd, temp.as_str(), &self.fd, name)?;
                }
                renamed => renamed?,
            }
            if durable {
                self.sync()?;
            }
            Ok(())
        })();
        if written.is_err() {
            let _ = nix::unistd::unlinkat(&self.fd, temp.as_str(), UnlinkatFlags::NoRemoveDir);
        }
        written.with_context(|| format!("cannot write {}", self.shown_of(name)))
    }

    /// A new file beside `name`, `.<name>.<32 random hex digits>.tmp`, created exclusively.
    fn create_temp(&self, name: &str, mode: u32) -> io::Result<(String, File)> {
        loop {
            let temp = layout::temp_name(name, &crate::random::hex()?);
            let flags = OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL;
            match self.open_file(&temp, flags, mode) {
                Ok(file) => return Ok((temp, file.expect("O_CREAT makes the file"))),
                // Someone made that name first: another one.
                Err(err) if err.raw_os_error() == Some(libc::EEXIST) => continue,
                Err(err) => return Err(err),
            }
        }
    }

    /// What `name` is (a link itself, not what it points to); `None` when it is absent.
    pub fn stat(&self, name: &str) -> io::Result<Option<FileStat>> {
        match nix::sys::stat::fstatat(&self.fd, name, nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW) {
            Ok(stat) => Ok(Some(stat)),
            Err(Errno::ENOENT) => Ok(None),
            Err(errno) => Err(errno.into()),
        }
    }

    /// Moves the file `name` aside to `<name>.corrupt-<UTC time>`, or, when that is taken
    /// (two in one second), `…-2`, `…-3` and so on: never over another file. Returns the
    /// new name.
    pub fn move_aside(&self, name: &str) -> Result<String> {
        let stamp = layout::corrupt_name(name);
        for n in 1..=1000 {
            let aside = match n {
                1 => stamp.clone(),
                n => format!("{stamp}-{n}"),
            };
            // linkat(2) fails with EEXIST where rename(2) would replace.
            match nix::unistd::linkat(
                &self.fd,
                name,
                &self.fd,
                aside.as_str(),
                nix::fcntl::AtFlags::empty(),
            ) {
                Ok(()) => {
                    self.remove(name)?;
                    let _ = self.sync();
                    return Ok(aside);
                }
                Err(Errno::EEXIST) => continue,
                // A directory cannot be linked: renamed to a name seen free a moment ago
                // (only those trusted with the directory could take it meanwhile).
                Err(Errno::EPERM) if matches!(self.stat(&aside), Ok(None)) => {
                    nix::fcntl::renameat(&self.fd, name, &self.fd, aside.as_str())
                        .map_err(io::Error::from)
                        .with_context(|| format!("cannot move {} aside", self.shown_of(name)))?;
                    let _ = self.sync();
                    return Ok(aside);
                }
                Err(errno) => {
                    return Err(io::Error::from(errno))
                        .with_context(|| format!("cannot move {} aside", self.shown_of(name)));
                }
            }
        }
        bail!(
            "cannot move {} aside: every name is taken",
            self.shown_of(name)
        )
    }

    /// Removes the file `name` (the link itself, if it is one); an absent one is fine.
    pub fn remove(&self, name: &str) -> Result<()> {
        match nix::unistd::unlinkat(&self.fd, name, UnlinkatFlags::NoRemoveDir) {
            Ok(()) | Err(Errno::ENOENT) => Ok(()),
            Err(errno) => Err(io::Error::from(errno))
                .with_context(|| format!("cannot remove {}", self.shown_of(name))),
        }
    }

    /// The names in this directory, with what each is (links not followed). Names that
    /// are not UTF-8 are left out: crontap-run writes none.
    pub fn entries(&self) -> Result<Vec<(String, FileStat)>> {
        let context = || format!("cannot read {}", self.shown());
        let fd = nix::fcntl::openat(&self.fd, ".", DIRECTORY, Mode::empty())
            .map_err(io::Error::from)
            .with_context(context)?;
        let mut listing = nix::dir::Dir::from_fd(fd)
            .map_err(io::Error::from)
            .with_context(context)?;
        let mut found = Vec::new();
        for entry in listing.iter() {
            let entry = entry.map_err(io::Error::from).with_context(context)?;
            let Ok(name) = entry.file_name().to_str() else {
                continue;
            };
            if name == "." || name == ".." {
                continue;
            }
            if let Ok(Some(stat)) = self.stat(name) {
                found.push((name.to_owned(), stat));
            }
        }
        Ok(found)
    }

    /// Makes the renames and removals in this directory durable.
    pub fn sync(&self) -> io::Result<()> {
        Ok(nix::unistd::fsync(&self.fd)?)
    }
}

/// Whether `stat` is of the type `kind` (a regular file, a directory).
pub fn is(stat: &FileStat, kind: SFlag) -> bool {
    SFlag::from_bits_truncate(stat.st_mode) & SFlag::S_IFMT == kind
}

/// Why a directory could not be opened, in words an operator can act on; `link` says
/// whether the path is a symbolic link (`O_NOFOLLOW` with `O_DIRECTORY` says ENOTDIR).
fn refusal(path: &Path, errno: Errno, link: bool) -> anyhow::Error {
    match errno {
        _ if link => anyhow::anyhow!(
            "{} is a symbolic link, which crontap-run does not follow: name the directory \
             it points to",
            show(path)
        ),
        Errno::ENOTDIR => anyhow::anyhow!("{} is not a directory", show(path)),
        errno => anyhow::Error::from(io::Error::from(errno))
            .context(format!("cannot open {}", show(path))),
    }
}

/// A path on one line, whatever it holds.
fn show(path: &Path) -> String {
    sanitize::path(path)
}

#[cfg(test)]
mod tests;
