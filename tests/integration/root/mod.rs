//! The group `root-tests` (a cargo feature): tests that give files to another account,
//! `nobody`, or read the descriptors of a process that is not dumpable, which only root can. CI runs them as root (`.ci/run`); asked for without root,
//! each fails saying so ([`crate::harness::nobody`]). Everything else that once needed
//! root gets what it needs from namespaces of its own ([`crate::namespace`]).

mod header_files;
mod lifeline;
mod planted;
