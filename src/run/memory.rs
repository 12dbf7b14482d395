//! crontap-run's memory: the allocator, what happens when it has nothing left to give, and
//! the check that the address-space limit (`ulimit -v`, `RLIMIT_AS`, systemd's `LimitAS=`)
//! leaves a run room.
//!
//! The allocator is the C library's (musl's in the static build, glibc's otherwise): both
//! keep themselves usable in a child forked while other threads allocate. [`Allocator`] adds
//! only what happens when it fails. Rust's own answer is to abort (exit 134), which would
//! replace the command's status; instead crontap-run writes one line naming the limit and
//! ends as a run ends:
//! - before the command was started: 125, the command is not run;
//! - while it runs: it waits for the command to end and exits with its status;
//! - once it has ended: with that status (the run's verdict, once there is one).
//!
//! What the run still had to do (the report, history, metrics) is skipped. That is the last
//! resort, for what no estimate foresaw: the run checks the room first, as
//! `run::descriptors` does for descriptors. Before `main` ([`refuse_if_no_room`]) and before
//! the command is started ([`ensure_room`]) too little room is crontap-run's own error (125,
//! one line naming the limit); before a report ([`have_room`]) it skips that report with one
//! line. The room is the soft limit less the address space mapped now (`/proc/self/statm`),
//! read only where a limit is set: without one a check is one `getrlimit`.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::io::Read;
use std::os::fd::{AsRawFd, BorrowedFd, RawFd};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, Ordering::SeqCst};

use anyhow::{Result, bail};
use nix::errno::Errno;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::resource::{Resource, getrlimit};

use crate::run::outcome::OWN_ERROR;
use crate::run::write::write_all;
use crate::run::{process, reap};

const MIB: u64 = 1024 * 1024;

/// Address space a run maps from its start to its end, beside what [`THREAD`] counts: the
/// runtime, the output threads (stack and read buffer each), the signal machinery, the
/// reaper, the failure summary's patterns, as measured with `ulimit -v` (a debug build
/// needs more).
pub const RUN: u64 = match cfg!(debug_assertions) {
    true => 4 * MIB,
    false => 3 * MIB,
};

/// Address space a thread of crontap-run's own adds (its stack, 2 MiB, and what the C
/// library sets up for it): the admission thread of a run that holds state, the replay of
/// held output, the start ping's thread. glibc keeps an ended thread's stack mapped for the
/// next thread; musl unmaps it, so there the threads' stacks seldom add up.
pub const THREAD: u64 = match cfg!(target_env = "musl") {
    true => MIB,
    false => 2 * MIB + MIB / 2,
};

/// Address space one ping maps: its runtime, the HTTP client, the TLS configuration, a
/// connection's buffers.
pub const PING: u64 = MIB;

/// Address space crontap-run needs from `main` to the check at the start of a run: the
/// command line, the configuration, the log.
const START: u64 = MIB;

/// The C library's allocator, and one line and an orderly exit where it has no memory left.
pub struct Allocator;

// SAFETY: every block comes from `System` and goes back to it with the caller's layout
// unchanged, so `GlobalAlloc`'s contract (a returned block is valid for its layout until it
// is freed; `dealloc` and `realloc` get only blocks of ours) is `System`'s. The only thing
// added is what happens to a null result: `out_of_memory` never returns and never unwinds
// (it exits the process, or parks the thread), so no caller sees null and no allocation
// panics. Nothing is pooled or kept: there is no state of ours to be copied into a child
// forked while another thread allocates (the C library's allocator takes that care).
unsafe impl GlobalAlloc for Allocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller keeps `alloc`'s contract (a non-zero size), which is `System`'s.
        checked(unsafe { System.alloc(layout) })
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as for `alloc`.
        checked(unsafe { System.alloc_zeroed(layout) })
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller gives a block of this allocator with its layout; every such
        // block came from `System` with that layout.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as for `dealloc`; the caller keeps `realloc`'s contract (a non-zero
        // `new_size` that does not overflow with the alignment).
        checked(unsafe { System.realloc(ptr, layout, new_size) })
    }
}

fn checked(ptr: *mut u8) -> *mut u8 {
    if ptr.is_null() {
        out_of_memory();
    }
    ptr
}

/// What an allocation that fails here would do: for the tests' fault points, which cannot
/// make the C library's allocator fail at a chosen moment.
pub fn fail_as_if_out_of_memory() -> ! {
    out_of_memory()
}

/// The process id of the command while it runs; 0 when none does.
static COMMAND: AtomicI32 = AtomicI32::new(0);
/// The status crontap-run exits with once the command has ended; -1 before.
static STATUS: AtomicI32 = AtomicI32::new(-1);
/// An attempt of the command has been started.
static STARTED: AtomicBool = AtomicBool::new(false);
/// The command is being spawned: it may run, and its pid is not known yet.
static SPAWNING: AtomicBool = AtomicBool::new(false);
/// How many spawns have begun; the thread making the last one holds its number in
/// [`SPAWN_HERE`].
static SPAWNS: AtomicU32 = AtomicU32::new(0);

thread_local! {
    /// The number of the spawn this thread began (a constant-initialised cell, read
    /// without allocating).
    static SPAWN_HERE: Cell<u32> = const { Cell::new(0) };
}
/// Set by the first thread that found no memory; any other then waits for it for good.
static FAILED: AtomicBool = AtomicBool::new(false);
/// Threads copying the command's output now ([`copying`] to [`copied`]), less those that
/// have passed all of it on without memory.
static COPIES: AtomicU32 = AtomicU32::new(0);

thread_local! {
    /// On a thread that copies the command's output: the pipe it reads, and crontap-run's own
    /// stream that output goes to ([`copying`]).
    static COPYING: Cell<Option<(RawFd, BorrowedFd<'static>)>> = const { Cell::new(None) };
    /// The bytes that copy has read and not yet written on ([`in_hand`]).
    static IN_HAND: Cell<(*const u8, usize)> = const { Cell::new((std::ptr::null(), 0)) };
}

/// The copy on this thread has read `bytes` and will write them on next (empty once it has):
/// with no memory left before it does, they are written first.
pub fn in_hand(bytes: &[u8]) {
    IN_HAND.set((bytes.as_ptr(), bytes.len()));
}

/// This thread copies the command's output from `source` on to `to`, crontap-run's own
/// stdout or stderr (also where the output is held: with no memory left, held output is
/// passed through). Should the memory run out, on this thread or another, it goes on passing
/// that output on without allocating (see [`out_of_memory`]). [`copied`] must follow before
/// `source` is closed, on this thread.
pub fn copying(source: BorrowedFd<'_>, to: BorrowedFd<'static>) {
    COPIES.fetch_add(1, SeqCst);
    COPYING.set(Some((source.as_raw_fd(), to)));
}

/// This thread's copy (see [`copying`]) has ended; its pipe may be closed.
pub fn copied() {
    IN_HAND.set((std::ptr::null(), 0));
    if COPYING.take().is_some() {
        COPIES.fetch_sub(1, SeqCst);
    }
}

/// The command is about to be spawned: from here until [`running`] (or [`settled`], if it
/// cannot be), it may run before its pid is known.
pub fn spawning() {
    let spawn = SPAWNS.fetch_add(1, SeqCst).wrapping_add(1);
    SPAWN_HERE.set(spawn);
    SPAWNING.store(true, SeqCst);
}

/// The command's process `pid` has been started.
pub fn running(pid: i32) {
    STARTED.store(true, SeqCst);
    // Its status is not known yet: an earlier attempt's must not be taken for it.
    STATUS.store(-1, SeqCst);
    COMMAND.store(pid, SeqCst);
    SPAWNING.store(false, SeqCst);
}

/// Whether an attempt of the command has been started in this run.
pub fn command_started() -> bool {
    STARTED.load(SeqCst)
}

/// The command has ended, or the run has a verdict without it: crontap-run would exit with
/// `status`.
pub fn settled(status: u8) {
    STATUS.store(i32::from(status), SeqCst);
    COMMAND.store(0, SeqCst);
    SPAWNING.store(false, SeqCst);
}

/// No memory left: one line, then the run's status (see the module's header). Allocates
/// nothing, and uses only calls that are safe in any state of the allocator.
#[cold]
fn out_of_memory() -> ! {
    let ending = !FAILED.swap(true, SeqCst);
    if let Some((source, to)) = COPYING.get() {
        // A copy of the command's output must not stop reading: the command would block on
        // its full pipe, and the run, which waits for the command to end, with it.
        pass_on_without_memory(source, to, ending);
        COPIES.fetch_sub(1, SeqCst);
    }
    if !ending {
        // Another thread is ending the run; this one must not go on without memory.
        loop {
            nix::unistd::pause();
        }
    }
    let mut line = Line::new();
    line.push(b"crontap-run: out of memory");
    if let Some(limit) = soft_limit() {
        line.push(b": the address-space limit (ulimit -v) is ");
        line.number(limit / 1024);
        line.push(b" KiB");
    }
    let status = status_now();
    match status {
        Status::Known(status) => {
            line.push(b"; the rest of the run (its report, history, metrics) is skipped; exit ");
            line.number(u64::from(status));
        }
        Status::NotRun => line.push(b"; the command was not run"),
        Status::Lost => line.push(b"; the command's status was lost"),
    }
    // The other copies pass on what the command left in its pipes, and then the line.
    within_settling(|| (COPIES.load(SeqCst) == 0).then_some(()));
    line.write();
    let status = match status {
        Status::Known(status) => status,
        Status::NotRun | Status::Lost => OWN_ERROR,
    };
    // At once: exit handlers and buffered output would want memory there is none of.
    process::exit_now(status)
}

/// What a copy of the command's output does when no memory is left (see [`copying`]):
/// passes on what the command writes into `source`, through a buffer on this thread's stack,
/// until the pipe ends; on the thread that ends the run (`ending`), also once the command
/// has ended and nothing more came for a moment. Allocates nothing.
fn pass_on_without_memory(source: RawFd, to: BorrowedFd<'static>, ending: bool) {
    // SAFETY: `source` is the pipe of the copy running on this thread: `copying` stored it
    // when the copy began, and `copied` takes it out before the copy returns and its pipe
    // is closed. This runs on that thread, from an allocation inside the copy, and never
    // returns into it (the thread then ends the run, or parks for good), so the pipe is open
    // for as long as this borrow is used.
    let source = unsafe { BorrowedFd::borrow_raw(source) };
    let (read, len) = IN_HAND.get();
    if len > 0 {
        // SAFETY: `in_hand` stored these from a slice of the copy's read buffer, which the
        // copy owns and keeps until it returns; the copy is on this thread, and never
        // resumes (see above), so the buffer is there and nothing writes to it.
        let _ = write_all(to, unsafe { std::slice::from_raw_parts(read, len) });
    }
    let mut buf = [0u8; 4096];
    loop {
        let mut fds = [PollFd::new(source, PollFlags::POLLIN)];
        match poll(&mut fds, PollTimeout::from(100u8)) {
            Ok(0) if ending && command_ended() => return,
            Ok(_) | Err(Errno::EINTR) => {}
            Err(_) => return,
        }
        match nix::unistd::read(source, &mut buf) {
            Ok(0) => return,
            // A destination that is gone is no reason to stop reading.
            Ok(n) => drop(write_all(to, &buf[..n])),
            Err(Errno::EINTR | Errno::EAGAIN) => {}
            Err(_) => return,
        }
    }
}

/// Whether the command has ended, or none runs. Allocates nothing.
fn command_ended() -> bool {
    match COMMAND.load(SeqCst) {
        0 => !SPAWNING.load(SeqCst),
        pid => {
            reap::has_exited(nix::unistd::Pid::from_raw(pid))
                || reap::status_of_reaped(pid).is_some()
        }
    }
}

/// What a run with no memory left knows of the status it exits with.
#[derive(Debug, PartialEq)]
enum Status {
    /// The command's, once it has ended, or the run's verdict.
    Known(u8),
    /// No command has run.
    NotRun,
    /// The command may have run, but its pid or its status did not come in time.
    Lost,
}

/// How long a run with no memory left waits for what another thread stores in the next few
/// instructions, allocating nothing in between: the pid of a command being spawned, the
/// status of one the supervisor has reaped.
const SETTLING: std::time::Duration = std::time::Duration::from_secs(1);

/// The status a run with no memory left exits with, waiting for the command if it runs.
/// Allocates nothing.
fn status_now() -> Status {
    // Being spawned: wait for its pid (a command that could not be spawned is settled),
    // unless this is the spawning thread, which has not forked it yet: the parent's side
    // of the fork allocates nothing until `running`.
    let spawner = SPAWN_HERE.get() == SPAWNS.load(SeqCst);
    let Some(pid) = within_settling(|| {
        // SPAWNING first: `running` clears it only after storing the pid.
        let spawning = SPAWNING.load(SeqCst) && !spawner;
        match COMMAND.load(SeqCst) {
            0 if spawning => None,
            pid => Some(pid),
        }
    }) else {
        return Status::Lost;
    };
    if pid == 0 {
        return u8::try_from(STATUS.load(SeqCst)).map_or(Status::NotRun, Status::Known);
    }
    // The output threads go on copying while this one waits.
    if let Some(status) = reap::wait_for_end(pid) {
        return Status::Known(status);
    }
    // It cannot be waited for: the supervisor has reaped it, and `reap::reap` records its
    // status at once, allocating nothing in between (and `settled` follows).
    within_settling(|| {
        reap::status_of_reaped(pid).or_else(|| u8::try_from(STATUS.load(SeqCst)).ok())
    })
    .map_or(Status::Lost, Status::Known)
}

/// The first `Some` of `look`, asked every millisecond for up to [`SETTLING`].
fn within_settling<T>(look: impl Fn() -> Option<T>) -> Option<T> {
    let since = std::time::Instant::now();
    loop {
        if let Some(found) = look() {
            return Some(found);
        }
        if since.elapsed() > SETTLING {
            return None;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

/// One line on stderr, built without allocating.
struct Line {
    bytes: [u8; 256],
    len: usize,
}

impl Line {
    fn new() -> Line {
        Line {
            bytes: [0; 256],
            len: 0,
        }
    }

    fn push(&mut self, text: &[u8]) {
        let n = text.len().min(self.bytes.len() - 1 - self.len);
        self.bytes[self.len..self.len + n].copy_from_slice(&text[..n]);
        self.len += n;
    }

    fn number(&mut self, mut n: u64) {
        let mut digits = [0u8; 20];
        let mut at = digits.len();
        loop {
            at -= 1;
            digits[at] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        self.push(&digits[at..]);
    }

    fn write(mut self) {
        self.bytes[self.len] = b'\n';
        let _ = nix::unistd::write(std::io::stderr(), &self.bytes[..=self.len]);
    }
}

/// Refuses to go on, before `main`, where the limit leaves too little room to come as far as
/// [`ensure_room`]: one line naming the limit, and exit 125. The binary calls it from
/// `.init_array`, before the Rust runtime maps anything (a failure there would be an abort,
/// or a segfault for a stack that cannot grow).
pub extern "C" fn refuse_if_no_room() {
    if let Err(err) = ensure_room(START, "start") {
        let mut line = Line::new();
        line.push(b"crontap-run: ");
        line.push(err.to_string().as_bytes());
        line.write();
        // Nothing has started yet that would need to end in order.
        process::exit_now(OWN_ERROR)
    }
}

/// Fails, naming the address-space limit, if fewer than `needed` bytes of address space
/// can be mapped now.
pub fn ensure_room(needed: u64, for_what: &str) -> Result<()> {
    let Some((limit, mapped)) = room() else {
        return Ok(());
    };
    if limit.saturating_sub(mapped) < needed {
        bail!(
            "too little memory to {for_what}: the address-space limit (ulimit -v) is {} KiB, \
             {} KiB are in use, and about {} KiB more are needed",
            limit / 1024,
            mapped / 1024,
            needed / 1024
        );
    }
    Ok(())
}

/// Whether `needed` bytes of address space can be mapped now; where not, the limit in KiB.
pub fn have_room(needed: u64) -> Result<(), u64> {
    match room() {
        Some((limit, mapped)) if limit.saturating_sub(mapped) < needed => Err(limit / 1024),
        _ => Ok(()),
    }
}

/// The soft limit and the address space mapped now, in bytes; `None` without a limit.
fn room() -> Option<(u64, u64)> {
    let limit = soft_limit()?;
    Some((limit, mapped().unwrap_or(0)))
}

/// The soft `RLIMIT_AS`; `None` where there is none. Allocates nothing.
fn soft_limit() -> Option<u64> {
    let (soft, _) = getrlimit(Resource::RLIMIT_AS).ok()?;
    (soft != libc::RLIM_INFINITY).then_some(soft)
}

/// The address space mapped now: the first field of `/proc/self/statm`, in pages. Read
/// into a buffer on the stack, so that it works with no memory to allocate.
fn mapped() -> Option<u64> {
    let mut file = std::fs::File::open("/proc/self/statm").ok()?;
    let mut text = [0u8; 128];
    let n = file.read(&mut text).ok()?;
    let pages = text[..n].split(|&b| b == b' ').next()?;
    let pages: u64 = std::str::from_utf8(pages).ok()?.parse().ok()?;
    let page = nix::unistd::sysconf(nix::unistd::SysconfVar::PAGE_SIZE)
        .ok()
        .flatten();
    Some(pages * page.and_then(|p| u64::try_from(p).ok()).unwrap_or(4096))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    /// Allocates and frees through [`Allocator`] in a child forked while four other threads
    /// allocate and free as fast as they can: an allocator whose lock a thread held at the
    /// fork would leave the child waiting for it for ever. The child uses only `write` and
    /// `_exit` besides the allocator.
    #[test]
    fn a_child_forked_while_threads_allocate_can_allocate() {
        let stop = Arc::new(AtomicBool::new(false));
        let threads: Vec<_> = (0..4)
            .map(|i| {
                let stop = Arc::clone(&stop);
                std::thread::spawn(move || {
                    let mut kept = Vec::new();
                    while !stop.load(SeqCst) {
                        // Small and large blocks, so every path of the allocator is busy.
                        for size in [16, 100, 4000, 70_000, 300_000] {
                            kept.push(vec![i as u8; size]);
                        }
                        kept.truncate(kept.len() % 7);
                    }
                })
            })
            .collect();
        for _ in 0..200 {
            assert_eq!(fork_and_allocate(), Ok(()));
        }
        stop.store(true, SeqCst);
        for thread in threads {
            thread.join().unwrap();
        }
    }

    /// Forks; the child allocates blocks of several sizes through [`Allocator`], writes
    /// "ok" and exits 0. The child's exit, or why it failed.
    fn fork_and_allocate() -> Result<(), String> {
        let (read, write) = nix::unistd::pipe().unwrap();
        // SAFETY: the child only allocates (what is tested), writes and exits.
        match unsafe { nix::unistd::fork() }.unwrap() {
            nix::unistd::ForkResult::Child => {
                for size in [8, 24, 512, 4096, 65_536, 1 << 20] {
                    let layout = Layout::from_size_align(size, 8).unwrap();
                    // SAFETY: a layout of non-zero size; the block is freed at once.
                    unsafe {
                        let block = Allocator.alloc(layout);
                        block.write(1);
                        Allocator.dealloc(block, layout);
                    }
                }
                let _ = nix::unistd::write(&write, b"ok");
                process::exit_now(0)
            }
            nix::unistd::ForkResult::Parent { child } => {
                drop(write);
                let deadline = Instant::now() + Duration::from_secs(20);
                loop {
                    use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
                    match waitpid(child, Some(WaitPidFlag::WNOHANG)).unwrap() {
                        WaitStatus::StillAlive if Instant::now() < deadline => {
                            std::thread::sleep(Duration::from_millis(1));
                        }
                        WaitStatus::StillAlive => {
                            let _ = nix::sys::signal::kill(child, nix::sys::signal::SIGKILL);
                            let _ = waitpid(child, None);
                            return Err("the child was stuck in the allocator".into());
                        }
                        WaitStatus::Exited(_, 0) => break,
                        other => return Err(format!("the child ended: {other:?}")),
                    }
                }
                let mut said = [0u8; 2];
                let n = nix::unistd::read(&read, &mut said).unwrap_or(0);
                match &said[..n] {
                    b"ok" => Ok(()),
                    other => Err(format!("the child said {other:?}")),
                }
            }
        }
    }

    /// The command the supervisor reaped just before the memory ran out can no longer be
    /// waited for (waitid finds no such child): its status is the one the supervisor
    /// settles, not "not run" and 125. Both moments: in the middle of `settled` (the
    /// status stored, the command not yet cleared), and before it. And one being spawned,
    /// whose pid is not stored yet, may already run: it is waited for too.
    #[test]
    fn a_command_reaped_or_spawned_just_before_the_memory_ran_out_gives_its_status() {
        use nix::sys::wait::{WaitStatus, waitpid};
        use nix::unistd::Pid;
        let reaped = |code: i32| {
            let pid = exiting_with(code);
            running(pid);
            // Reaped, as the supervisor reaps it.
            let ended = waitpid(Pid::from_raw(pid), None).unwrap();
            assert_eq!(ended, WaitStatus::Exited(Pid::from_raw(pid), code));
        };

        reaped(7);
        STATUS.store(7, SeqCst);
        assert_eq!(status_now(), Status::Known(7), "in the middle of `settled`");

        reaped(9);
        let waiting = std::thread::spawn(status_now);
        settled(9);
        assert_eq!(
            waiting.join().unwrap(),
            Status::Known(9),
            "before `settled`"
        );
        assert_eq!(status_now(), Status::Known(9), "after `settled`");

        // A later attempt's command, reaped before its status is stored: not the earlier
        // attempt's status (9), but lost.
        reaped(3);
        assert_eq!(status_now(), Status::Lost, "an earlier attempt's status");
        settled(3);

        // Being spawned: its pid is not known yet, but it may run. For another thread, not
        // "not run" (and certainly not the earlier attempt's 3): its status once its pid
        // comes, or lost.
        let elsewhere = || std::thread::spawn(status_now);
        spawning();
        assert_eq!(
            elsewhere().join().unwrap(),
            Status::Lost,
            "a pid that never came"
        );
        let waiting = elsewhere();
        let pid = exiting_with(4);
        running(pid);
        assert_eq!(waiting.join().unwrap(), Status::Known(4), "a pid that came");
        let _ = waitpid(Pid::from_raw(pid), None);
        settled(4);

        // The spawning thread itself, out of memory before its fork: nothing of this
        // attempt runs, and the earlier attempt's status stands.
        spawning();
        assert_eq!(status_now(), Status::Known(4), "the spawning thread");
        settled(6);
        assert_eq!(
            elsewhere().join().unwrap(),
            Status::Known(6),
            "not spawned after all"
        );
    }

    /// Starts `sh -c 'exit <code>'`; the caller reaps it by its pid with `waitpid`, as the
    /// supervisor reaps the command (not through `Child`, which the code under test never
    /// sees).
    #[expect(clippy::zombie_processes, reason = "reaped by pid with waitpid")]
    fn exiting_with(code: i32) -> i32 {
        let child = std::process::Command::new("/bin/sh")
            .args(["-c", &format!("exit {code}")])
            .spawn()
            .unwrap();
        i32::try_from(child.id()).unwrap()
    }

    /// Room is the limit less what is mapped: none where no limit is set.
    #[test]
    fn room_is_measured_against_the_limit_only_where_one_is_set() {
        match soft_limit() {
            None => {
                assert!(ensure_room(u64::MAX, "test").is_ok());
                assert_eq!(have_room(u64::MAX), Ok(()));
            }
            Some(limit) => {
                let err = ensure_room(limit, "test").unwrap_err().to_string();
                assert!(err.contains("(ulimit -v) is"), "{err}");
            }
        }
        let mapped = mapped().expect("/proc/self/statm");
        assert!(mapped > MIB, "{mapped}");
    }
}
