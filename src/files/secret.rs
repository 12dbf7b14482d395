//! Files the operator names that hold credentials crontap-run sends on (`--header @PATH`).
//!
//! What such a file says goes to the heartbeat service with crontap-run's privileges, so
//! the file, and the way to it, must be beyond the reach of other accounts: every directory
//! on the way is trusted as the state directory is ([`trust`], StrictModes-like), and the
//! file is opened by handle in its directory, never through a link there. A link is
//! followed only by reading it in its trusted directory and starting over from its target,
//! whose own directory must be trusted too: a Kubernetes secret volume's files are links
//! (`headers -> ..data/headers`) made by the kubelet in such a directory, while a link
//! planted in a directory another account can write is refused with that directory. The
//! file itself must be a regular file owned by root or this user and writable by no one
//! else, as seen on the open handle, so that nothing can be swapped in after the checks.

use std::io::{self, Read};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow, bail};
use nix::errno::Errno;
use nix::fcntl::OFlag;
use nix::sys::stat::Mode;

use super::trust::Runner;
use super::{Check, Dir, NotPlain};

/// Most links followed from the name given to the file: a Kubernetes secret takes two.
const MAX_LINKS: usize = 8;

/// The contents of the trusted file at `path`, of at most `max` bytes.
pub fn read_secret(path: &Path, max: u64) -> Result<Vec<u8>> {
    let mut current = super::parents::plain(path)?;
    for _ in 0..=MAX_LINKS {
        let (dir_path, name) = split(&current)?;
        let dir = open_dir(&dir_path)?;
        match dir.open_file(&name, OFlag::O_RDONLY, 0) {
            Ok(Some(file)) => return read_owned(file, max),
            Ok(None) => bail!("{} does not exist", dir.shown_of(&name)),
            Err(err) if NotPlain::of(&err) == Some(NotPlain::Link) => {
                let target = nix::fcntl::readlinkat(&dir.fd, name.as_str())
                    .map_err(io::Error::from)
                    .with_context(|| format!("cannot read the link {}", dir.shown_of(&name)))?;
                current = super::parents::plain(&dir_path.join(target))?;
            }
            Err(err) => return Err(err).context(dir.shown_of(&name)),
        }
    }
    bail!("more than {MAX_LINKS} symbolic links on the way to the file")
}

/// Opens the directory at `path` (plain), checked as the state directory is. Unlike
/// [`Dir::open`], its last name may be a link (a secret volume's `..data`), if the
/// directory holding the link is itself one no other account can write (not merely sticky,
/// as a parent may be): then the link was made by someone trusted, and what it leads to is
/// checked on the handle.
fn open_dir(path: &Path) -> Result<Dir> {
    let missing = || anyhow!("{} does not exist", super::show(path));
    if !super::parents::approach(path, false, Runner::this())? {
        return Err(missing());
    }
    let link = std::fs::symlink_metadata(path).is_ok_and(|m| m.is_symlink());
    if let (true, Some(holder)) = (link, path.parent()) {
        Dir::open(holder, Check::Private, false)?.ok_or_else(missing)?;
    }
    let flags = super::DIRECTORY.difference(OFlag::O_NOFOLLOW);
    let fd = match nix::fcntl::open(path, flags, Mode::empty()) {
        Ok(fd) => fd,
        Err(Errno::ENOENT) => return Err(missing()),
        Err(errno) => return Err(super::refusal(path, errno, false)),
    };
    let dir = Dir {
        fd,
        shown: path.to_owned(),
    };
    dir.checked(Check::Private)?;
    Ok(dir)
}

/// The directory and the name of a plain absolute path to a file.
fn split(path: &Path) -> Result<(PathBuf, String)> {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        bail!("{} names no file", super::show(path));
    };
    let name = std::str::from_utf8(name.as_bytes())
        .map_err(|_| anyhow!("{} is not a UTF-8 path", super::show(path)))?;
    Ok((dir.to_owned(), name.to_owned()))
}

/// Reads an opened file that must be owned by root or this user and writable by no one
/// else.
fn read_owned(file: std::fs::File, max: u64) -> Result<Vec<u8>> {
    let stat = nix::sys::stat::fstat(&file).map_err(io::Error::from)?;
    let euid = nix::unistd::geteuid().as_raw();
    if stat.st_uid != 0 && stat.st_uid != euid {
        bail!("owned by uid {}, neither root nor this user", stat.st_uid);
    }
    if stat.st_mode & 0o022 != 0 {
        bail!("writable by group or others; it holds credentials");
    }
    let mut bytes = Vec::new();
    file.take(max + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        bail!(
            "larger than {} KiB, too large for what it should hold",
            max / 1024
        );
    }
    Ok(bytes)
}
