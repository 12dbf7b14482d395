//! The way down to a directory crontap-run opens by path: its path made absolute and plain
//! (no `.` and no trailing `/`, so that the last name is the directory itself and a link
//! there is seen as one), every directory above it checked ([`trust`], as a parent), and
//! with `create` the missing ones made 0700 on the way (`mkdir -p -m 0700`).
//!
//! The parents are looked at by path, following links, as the kernel will when the
//! directory is opened: a link in a trusted parent was put there by someone trusted.

use std::io;
use std::path::{Component, Path, PathBuf};

use anyhow::{Context, Result, bail};
use nix::errno::Errno;
use nix::fcntl::{AT_FDCWD, OFlag};
use nix::sys::stat::Mode;

use super::show;
use super::trust::{self, Role, Runner};

/// `path`, absolute and plain.
pub fn plain(path: &Path) -> Result<PathBuf> {
    let absolute = std::path::absolute(path)
        .with_context(|| format!("cannot make {} an absolute path", show(path)))?;
    Ok(absolute
        .components()
        .filter(|c| !matches!(c, Component::CurDir))
        .collect())
}

/// Checks every directory above `path` (plain) as a parent for `runner`, making missing
/// ones (and, with `create`, `path` itself) 0700. Without `create`, a missing parent is
/// `Ok(false)`: there is nothing to open.
pub fn approach(path: &Path, create: bool, runner: &Runner) -> Result<bool> {
    let mut above = PathBuf::new();
    let parents: Vec<Component> = path
        .parent()
        .map_or(Vec::new(), |p| p.components().collect());
    for component in parents {
        above.push(component);
        let why = match untrusted(&above, runner) {
            Err(Errno::ENOENT) if create => {
                // Made by crontap-run just now, 0700: nothing to doubt.
                make(&above)?;
                continue;
            }
            Err(Errno::ENOENT) => return Ok(false),
            Err(errno) => {
                return Err(io::Error::from(errno))
                    .with_context(|| format!("cannot open {}", show(&above)));
            }
            Ok(why) => why,
        };
        if let Some(why) = why {
            bail!("{} (above the directory) {why}", show(&above));
        }
    }
    if create {
        make(path)?;
    }
    Ok(true)
}

/// Why the parent `dir` is not to be trusted, if it is not (`Err` when it is not there,
/// not a directory, or cannot be looked at).
fn untrusted(dir: &Path, runner: &Runner) -> nix::Result<Option<String>> {
    // Opened to read its ACL; a parent crontap-run may only pass through (mode 0711) is
    // looked at by its mode alone.
    let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC;
    let (stat, acl) = match nix::fcntl::open(dir, flags, Mode::empty()) {
        Ok(fd) => (nix::sys::stat::fstat(&fd)?, trust::has_acl(&fd)),
        Err(Errno::EACCES) => (nix::sys::stat::stat(dir)?, false),
        Err(errno) => return Err(errno),
    };
    if !super::is(&stat, nix::sys::stat::SFlag::S_IFDIR) {
        return Err(Errno::ENOTDIR);
    }
    Ok(trust::check(&stat, acl, runner, Role::Parent).err())
}

/// Makes the directory `dir` 0700 unless it is there (in whatever form: what it is, is
/// for the open to judge).
fn make(dir: &Path) -> Result<()> {
    match nix::sys::stat::mkdirat(AT_FDCWD, dir, Mode::from_bits_truncate(0o700)) {
        Ok(()) | Err(Errno::EEXIST) => Ok(()),
        Err(errno) => {
            Err(io::Error::from(errno)).with_context(|| format!("cannot create {}", show(dir)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_made_plain() {
        let cwd = std::env::current_dir().unwrap();
        assert_eq!(plain(Path::new("/a/./b/")).unwrap(), PathBuf::from("/a/b"));
        assert_eq!(plain(Path::new("/a/b/.")).unwrap(), PathBuf::from("/a/b"));
        assert_eq!(plain(Path::new("rel")).unwrap(), cwd.join("rel"));
        assert_eq!(plain(Path::new("/")).unwrap(), PathBuf::from("/"));
    }
}
