//! Running the command: the child process, its output, the signals crontap-run passes on,
//! the terminal, and how the run ended.
//!
//! [`supervise`] sets each attempt up and runs its event loop (what an attempt tells its
//! caller is in [`finished`]), and [`watch`] holds the
//! command's states (running, stopping with a SIGKILL time, killed) and what each event does
//! to them; [`reap`] reaps the command and orphans from raw wait statuses; [`exec`] finds and
//! executes its program as `execvp(3)` does, with the environment [`job_env`] builds;
//! [`output`] and [`tee`] pass its output through (writing through [`write`]) and keep a tail
//! of each stream, or
//! hand it to [`hold`], which keeps it (in [`spill`]'s bounded buffers and unnamed files)
//! for the run's end to print or drop (`--output on-failure`); both write on as [`write`]
//! does;
//! [`signals`] says which signals are forwarded and why, and records stop requests to
//! crontap-run itself; [`terminal`] hands the terminal's foreground to the job;
//! [`lifeline`] kills the job's group if crontap-run dies while it holds state; [`process`]
//! lends crontap-run's standard descriptors and ends the process at once; [`group`]
//! tells whether anything is left in the job's group once its leader has exited;
//! [`outcome`] turns an exit status into crontap-run's own; [`descriptors`] counts every
//! file descriptor crontap-run holds and checks that the open-files limit leaves room; [`retry`] decides whether a
//! failed attempt runs again; [`memory`] is the binary's allocator (the C library's) and, like
//! [`descriptors`] for descriptors, checks that the address-space limit leaves room, and ends
//! a run that has no memory left without replacing the command's status.
//!
//! The invariant this wing keeps: the command's exit status reaches [`outcome::Outcome`]
//! unchanged, and only a stop crontap-run decided on (`--timeout`, a lost lease) replaces it.

pub(crate) mod descriptors;
pub(crate) mod exec;
pub(crate) mod finished;
pub(crate) mod group;
pub(crate) mod hold;
pub(crate) mod job_env;
pub(crate) mod lifeline;
pub mod memory;
pub mod outcome;
pub(crate) mod output;
pub(crate) mod process;
pub(crate) mod reap;
pub(crate) mod retry;
pub mod signals;
pub(crate) mod spill;
pub(crate) mod supervise;
pub(crate) mod tail;
pub(crate) mod tee;
pub(crate) mod terminal;
pub(crate) mod watch;
pub(crate) mod write;
