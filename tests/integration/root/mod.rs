//! The group `root-tests` (a cargo feature): tests that give files to another account,
//! `nobody`, read the descriptors of a process that is not dumpable, or run root's crontab
//! in a cron daemon of their own, which only root can. CI runs them as root (`.ci/run`); asked for without root,
//! each fails saying so ([`crate::harness::nobody`]). Everything else that once needed
//! root gets what it needs from namespaces of its own ([`crate::namespace`]).

mod header_files;
mod lifeline;
mod planted;
// Debian's cron daemon (package cron) runs a crontab `plan` wrapped.
#[cfg(feature = "external-tests")]
mod real_cron;
