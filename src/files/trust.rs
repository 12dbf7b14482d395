//! Which directories crontap-run trusts with its state, in the spirit of OpenSSH's
//! StrictModes: one owned by the user crontap-run runs as, or by root, that no other user
//! can write. Group-writable is accepted when the group is one of crontap-run's own: a
//! Kubernetes volume with an `fsGroup` is mode 2775, and the pod's processes are in that
//! group. An access ACL that may grant write to anyone else counts as writable by others.
//!
//! Every directory above it must be as safe: owned by root or the user, and writable by
//! others only with the sticky bit (as `/tmp` is), where no one can rename what is not
//! theirs. Otherwise whoever can write a parent could swap the directory for another.
//!
//! A directory anyone else could change is refused before the command starts, with one line
//! naming the directory and what to do.

use std::os::fd::{AsFd, AsRawFd};

use nix::sys::stat::FileStat;

/// Who crontap-run runs as: its effective user and every group it is in.
#[derive(Debug, Clone)]
pub struct Runner {
    pub uid: u32,
    pub groups: Vec<u32>,
}

impl Runner {
    /// This process: read once, since it never changes while crontap-run runs.
    pub fn this() -> &'static Runner {
        static THIS: std::sync::OnceLock<Runner> = std::sync::OnceLock::new();
        THIS.get_or_init(Runner::read)
    }

    fn read() -> Runner {
        let mut groups: Vec<u32> = nix::unistd::getgroups()
            .unwrap_or_default()
            .into_iter()
            .map(|g| g.as_raw())
            .collect();
        groups.push(nix::unistd::getegid().as_raw());
        Runner {
            uid: nix::unistd::geteuid().as_raw(),
            groups,
        }
    }
}

/// What is checked: the directory crontap-run keeps its files in, or one above it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Own,
    Parent,
}

/// Why the directory whose status is `stat` (and which has an extended access ACL when
/// `acl`) is not to be trusted by `runner` in `role`, in words that say what to change;
/// `Ok` when it is.
pub fn check(stat: &FileStat, acl: bool, runner: &Runner, role: Role) -> Result<(), String> {
    let owner = stat.st_uid;
    if owner != runner.uid && owner != 0 {
        let allowed = match runner.uid {
            0 => "root".to_owned(),
            uid => format!("{} or root", user(uid)),
        };
        return Err(format!(
            "is owned by {}, not by {allowed}: another account could change what \
             crontap-run keeps there (chown it, or use another directory)",
            user(owner),
        ));
    }
    let mode = stat.st_mode & 0o7777;
    let sticky = mode & 0o1000 != 0;
    if role == Role::Parent && sticky {
        // No one renames or removes what is not theirs in a sticky directory.
        return Ok(());
    }
    if mode & 0o002 != 0 {
        return Err(format!(
            "can be written by every user (mode {mode:04o}): make it 0700 (chmod 700) or use \
             a directory of crontap-run's own"
        ));
    }
    // With an ACL, the group bits are the most any named user or group may have.
    if acl && mode & 0o020 != 0 {
        return Err(format!(
            "has an access ACL that may let other accounts write it (mode {mode:04o}; see \
             getfacl): remove it (setfacl -b) or use another directory"
        ));
    }
    if mode & 0o020 != 0 && !runner.groups.contains(&stat.st_gid) {
        return Err(format!(
            "can be written by the group {} (mode {mode:04o}), which crontap-run is not in: \
             chmod g-w it, or give it one of crontap-run's groups",
            group(stat.st_gid)
        ));
    }
    Ok(())
}

/// Whether the open directory `fd` has an access ACL beyond its mode bits.
pub fn has_acl(fd: impl AsFd) -> bool {
    // SAFETY: the descriptor is borrowed for the call and the name is a C string literal; a
    // null buffer of size 0 asks only for the attribute's size, so nothing is written.
    // (Neither nix nor std has an xattr call.)
    let size = unsafe {
        libc::fgetxattr(
            fd.as_fd().as_raw_fd(),
            c"system.posix_acl_access".as_ptr(),
            std::ptr::null_mut(),
            0,
        )
    };
    size > 0
}

/// `uid 65534 (nobody)`, or the number alone when the name is unknown.
fn user(uid: u32) -> String {
    match nix::unistd::User::from_uid(nix::unistd::Uid::from_raw(uid)) {
        Ok(Some(user)) => format!("uid {uid} ({})", user.name),
        _ => format!("uid {uid}"),
    }
}

/// `gid 65534 (nogroup)`, or the number alone when the name is unknown.
fn group(gid: u32) -> String {
    match nix::unistd::Group::from_gid(nix::unistd::Gid::from_raw(gid)) {
        Ok(Some(group)) => format!("gid {gid} ({})", group.name),
        _ => format!("gid {gid}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stat(uid: u32, gid: u32, mode: u32) -> FileStat {
        // SAFETY: FileStat is a plain C struct; all zeroes is a valid value.
        let mut stat: FileStat = unsafe { std::mem::zeroed() };
        stat.st_uid = uid;
        stat.st_gid = gid;
        stat.st_mode = libc::S_IFDIR | mode;
        stat
    }

    fn runner(uid: u32, groups: &[u32]) -> Runner {
        Runner {
            uid,
            groups: groups.to_vec(),
        }
    }

    #[test]
    fn own_or_roots_and_not_writable_by_others() {
        let own = Role::Own;
        assert!(check(&stat(1000, 1000, 0o700), false, &runner(1000, &[1000]), own).is_ok());
        assert!(check(&stat(0, 0, 0o755), false, &runner(1000, &[1000]), own).is_ok());
        assert!(check(&stat(0, 0, 0o700), false, &runner(0, &[0]), own).is_ok());
        // An fsGroup volume: the pod's processes are in its group.
        assert!(check(&stat(0, 2000, 0o2775), false, &runner(0, &[0, 2000]), own).is_ok());
        // An ACL that grants no write is no risk.
        assert!(check(&stat(0, 0, 0o750), true, &runner(0, &[0]), own).is_ok());
    }

    #[test]
    fn anothers_or_writable_by_others_is_refused() {
        let own = Role::Own;
        let root = runner(0, &[0]);
        let why = check(&stat(65534, 0, 0o700), false, &root, own).unwrap_err();
        assert!(why.starts_with("is owned by uid 65534"), "{why}");
        assert!(why.contains("not by root:"), "{why}");
        let why = check(&stat(0, 0, 0o777), false, &root, own).unwrap_err();
        assert!(why.contains("mode 0777"), "{why}");
        // The sticky bit does not make a shared directory crontap-run's own.
        assert!(check(&stat(0, 0, 0o1777), false, &root, own).is_err());
        assert!(check(&stat(1000, 1000, 0o700), false, &runner(1001, &[1001]), own).is_err());
        let why = check(&stat(0, 65534, 0o2775), false, &root, own).unwrap_err();
        assert!(why.contains("group gid 65534"), "{why}");
        let why = check(&stat(0, 0, 0o770), true, &root, own).unwrap_err();
        assert!(why.contains("ACL"), "{why}");
    }

    #[test]
    fn a_parent_may_be_shared_only_with_the_sticky_bit() {
        let root = runner(0, &[0]);
        assert!(check(&stat(0, 0, 0o1777), false, &root, Role::Parent).is_ok());
        assert!(check(&stat(0, 0, 0o777), false, &root, Role::Parent).is_err());
        assert!(check(&stat(65534, 0, 0o1777), false, &root, Role::Parent).is_err());
        assert!(check(&stat(0, 0, 0o755), false, &root, Role::Parent).is_ok());
    }
}
