//! Who is still in the command's process group once its leader has exited.
//!
//! A stop (a forwarded SIGTERM, `--timeout`, a lost lease) goes to the whole group, but the
//! leader is often a shell that dies of SIGTERM at once while the program it runs ignores it
//! (a JVM's shutdown hook, a Go program with `signal.Notify`, `trap '' TERM`). Were
//! crontap-run to stop there, that program would run on after crontap-run has exited and
//! released its lock or key, beside the next run. So the supervisor keeps the exited leader
//! unreaped, which keeps its process id, and so the group's id, from being reused, and asks
//! here whether any other process is still in the group before it lets the leader go.
//!
//! The kernel has no call that counts a group's members: `kill(-pgid, 0)` succeeds while
//! the unreaped leader is in it. Each process's group is in `/proc/<pid>/stat`, so this reads
//! them, only on that stop path, ten times a second: first the member found last time, and
//! all of `/proc` only once that one has gone. Without `/proc` nothing is found, and the run
//! ends as it would have before.

use nix::unistd::Pid;

/// The members of one process group, looked up again each time they are asked about.
pub struct Group {
    pgid: Pid,
    /// The member found last time: usually still there (a program waiting for SIGKILL), so
    /// it is read first, and all of `/proc` only once it has gone.
    seen: Option<String>,
}

impl Group {
    pub fn new(pgid: Pid) -> Group {
        Group { pgid, seen: None }
    }

    /// Whether a process other than a zombie is in the group.
    pub fn has_live_members(&mut self) -> bool {
        if let Some(pid) = &self.seen
            && self.is_member(pid)
        {
            return true;
        }
        self.seen = None;
        let Ok(entries) = std::fs::read_dir("/proc") else {
            return false;
        };
        self.seen = entries
            .flatten()
            .filter_map(|entry| entry.file_name().into_string().ok())
            .filter(|name| name.bytes().all(|b| b.is_ascii_digit()))
            .find(|pid| self.is_member(pid));
        self.seen.is_some()
    }

    fn is_member(&self, pid: &str) -> bool {
        // A process that exited between the listing and the read is no member.
        std::fs::read(format!("/proc/{pid}/stat"))
            .is_ok_and(|stat| is_live_member(&stat, self.pgid))
    }
}

/// Whether a `/proc/<pid>/stat` line is that of a process in `pgid` that has not exited.
///
/// The line is `pid (comm) state ppid pgrp …`; `comm` may hold spaces and parentheses, so
/// the fields are counted from its last `)`.
fn is_live_member(stat: &[u8], pgid: Pid) -> bool {
    let Some(close) = stat.iter().rposition(|&b| b == b')') else {
        return false;
    };
    let mut fields = stat[close + 1..]
        .split(|&b| b == b' ')
        .filter(|f| !f.is_empty());
    let (Some(state), Some(_ppid), Some(pgrp)) = (fields.next(), fields.next(), fields.next())
    else {
        return false;
    };
    // Z: exited, waiting to be reaped; X: being reaped.
    let exited = matches!(state, b"Z" | b"X");
    !exited && std::str::from_utf8(pgrp).ok().and_then(|p| p.parse().ok()) == Some(pgid.as_raw())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;
    use std::process::Command;

    #[test]
    fn reads_the_group_after_a_command_name_with_parentheses_and_spaces() {
        let pgid = Pid::from_raw(4242);
        assert!(is_live_member(b"4250 (java) S 4242 4242 4242 0 -1", pgid));
        assert!(is_live_member(b"4251 (a) b (c) R 1 4242 4242 0", pgid));
        assert!(!is_live_member(b"4252 (sh) S 1 4243 4243 0", pgid));
        assert!(!is_live_member(b"4242 (sh) Z 1 4242 4242 0", pgid));
        assert!(!is_live_member(b"4253 (sh) X 1 4242 4242 0", pgid));
        assert!(!is_live_member(b"garbage", pgid));
        assert!(!is_live_member(b"4254 (sh) S 1", pgid));
    }

    #[test]
    fn finds_a_running_group_and_not_an_ended_one() {
        let mut child = Command::new("sleep")
            .arg("30")
            .process_group(0)
            .spawn()
            .unwrap();
        let mut group = Group::new(Pid::from_raw(child.id() as i32));
        assert!(group.has_live_members());
        // Again, from the member it remembers.
        assert!(group.has_live_members());
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(!group.has_live_members());
        assert!(!group.has_live_members());
        // The tests' own group is live, which shows the scan reads real entries.
        assert!(Group::new(nix::unistd::getpgrp()).has_live_members());
    }
}
