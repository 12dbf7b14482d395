//! Which directories crontap-run trusts with its state, in the spirit of OpenSSH's
//! StrictModes: one owned by the user crontap-run runs as, or by root, and that no other
//! user can write. Group-writable is accepted: a Kubernetes volume with an `fsGroup` is
//! mode 2775, and the group is the pod's own.
//!
//! A directory anyone else can write lets them plant links and forged records, so it is
//! refused before the command starts, with one line naming the directory and what to do.

use nix::sys::stat::FileStat;

/// Why the directory whose status is `stat` is not to be trusted by a process running as
/// `euid`, in words that say what to change; `Ok` when it is.
pub fn check(stat: &FileStat, euid: u32) -> Result<(), String> {
    let owner = stat.st_uid;
    if owner != euid && owner != 0 {
        let allowed = match euid {
            0 => "root".to_owned(),
            euid => format!("{} or root", user(euid)),
        };
        return Err(format!(
            "is owned by {}, not by {allowed}: another account could change what \
             crontap-run keeps there (chown it, or use another directory)",
            user(owner),
        ));
    }
    let mode = stat.st_mode & 0o7777;
    if mode & 0o002 != 0 {
        return Err(format!(
            "can be written by every user (mode {mode:04o}): make it 0700 (chmod 700) or use \
             a directory of crontap-run's own"
        ));
    }
    Ok(())
}

/// `uid 65534 (nobody)`, or the number alone when the name is unknown.
fn user(uid: u32) -> String {
    match nix::unistd::User::from_uid(nix::unistd::Uid::from_raw(uid)) {
        Ok(Some(user)) => format!("uid {uid} ({})", user.name),
        _ => format!("uid {uid}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stat(uid: u32, mode: u32) -> FileStat {
        // SAFETY: FileStat is a plain C struct; all zeroes is a valid value.
        let mut stat: FileStat = unsafe { std::mem::zeroed() };
        stat.st_uid = uid;
        stat.st_mode = libc::S_IFDIR | mode;
        stat
    }

    #[test]
    fn own_or_roots_and_not_writable_by_others() {
        assert!(check(&stat(1000, 0o700), 1000).is_ok());
        assert!(check(&stat(0, 0o755), 1000).is_ok());
        assert!(check(&stat(0, 0o700), 0).is_ok());
        // An fsGroup volume.
        assert!(check(&stat(0, 0o2775), 0).is_ok());
        assert!(check(&stat(0, 0o770), 1000).is_ok());
    }

    #[test]
    fn anothers_or_writable_by_everyone_is_refused() {
        let why = check(&stat(65534, 0o700), 0).unwrap_err();
        assert!(why.starts_with("is owned by uid 65534"), "{why}");
        let why = check(&stat(0, 0o777), 0).unwrap_err();
        assert!(why.contains("mode 0777"), "{why}");
        // The sticky bit does not make a shared directory crontap-run's.
        assert!(check(&stat(0, 0o1777), 0).is_err());
        assert!(check(&stat(1000, 0o700), 1001).is_err());
    }
}
