//! Keeping crontap-run's secrets out of the job's reach.
//!
//! The job runs as the same user as crontap-run, and the kernel lets a process read the
//! `/proc/<pid>/environ`, `mem`, `maps` and `auxv` of every process of its user, and attach
//! a debugger to it. crontap-run holds what the job must not have: the heartbeat URL and the
//! state store's URL (with its password) are in its environment, which it removes from the
//! job's only, and in its memory once read, from a file too. So crontap-run makes itself
//! non-dumpable: the kernel then refuses all of that to every process without
//! `CAP_SYS_PTRACE` (the job, anything else of the same user), makes the `/proc/<pid>`
//! entries root's, and writes no core dump of crontap-run. `/proc/<pid>/cmdline` stays
//! readable by every user, which is why a password on the command line gets a warning.
//!
//! The flag belongs to the address space: the lifeline (forked, never executed) and the job's
//! first process between fork and exec keep it, and the job's `exec` gives it a fresh,
//! dumpable one, so the job can be debugged and dump core as usual.

/// Makes crontap-run non-dumpable. The binary calls it from `.init_array`, before the Rust
/// runtime starts: the secrets are in the environment from `exec` on, so every instruction
/// before this call is a moment in which another process of the user could read them, and no
/// path through the program (a subcommand, an early error) may skip it. It also comes before
/// any thread, child or lifeline exists, so all of them start non-dumpable.
pub extern "C" fn keep_secrets_from_the_job() {
    // PR_SET_DUMPABLE fails only for an invalid argument, and there is nothing to log to
    // yet: the result can be ignored.
    let _ = nix::sys::prctl::set_dumpable(false);
}
