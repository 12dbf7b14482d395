//! Passes the command's stdout and stderr through to crontap-run's own, byte for byte, while
//! keeping a bounded tail of each for the failure summary and, when the run keeps one, the
//! tail both streams share, for a request body ([`tail`](super::tail)). With `--output
//! on-failure` the bytes go to the run's [`Hold`](super::hold::Hold) instead, and the tails
//! are kept the same.
//!
//! Each pipe has its own copying thread with blocking reads and writes, so output reaches
//! its destination as soon as the command writes it, with no more system calls than `cat`
//! makes. Bytes go into the tail before they are written on, so a slow reader
//! never hides the last line from the summary. A destination that is non-blocking is waited
//! on, not given up on.
//!
//! If a destination goes away (its reader closed), copying to it stops but draining goes
//! on: the command is never blocked or killed for it, and its exit status is kept.
//!
//! After the command exits, [`finish_all`] waits for everything the command wrote to be
//! passed on to a slow reader. It stops early when what is left is clearly not the
//! command's: after a grace period spent waiting for input (a background process the
//! command left behind holds a pipe open), or after more bytes than the pipes could have
//! held when the command ended (a background process is still writing). It also stops when
//! crontap-run is told to stop, and when the reader has been stuck for a minute.

use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use nix::errno::Errno;

use crate::fault;
use crate::run::hold::{Which, Writer};
use crate::run::signals::SignalLog;
use crate::run::tail::{LineFeed, Tail};
use crate::run::write::{STUCK_READER, write_all};
use crate::run::{memory, process};

/// Bytes of each stream kept for the summary.
pub const TAIL_BYTES: usize = 32 * 1024;
const CHUNK: usize = 256 * 1024;
/// The read buffer starts on a page boundary (see [`ReadBuffer`]).
const PAGE: usize = 4096;
/// Size asked for the command's pipes: fewer, larger reads and writes for bulk output.
/// Linux lets any user go up to /proc/sys/fs/pipe-max-size (1 MiB by default).
const PIPE_SIZE: i32 = 1024 * 1024;
const STACK: usize = 128 * 1024;
/// How often `finish` looks again while a slow reader is being written to.
const RECHECK: Duration = Duration::from_millis(100);
/// How long `finish` keeps passing output on once crontap-run has been told to stop.
const STOP_DRAIN: Duration = Duration::from_millis(500);

/// One pipe to copy: the command's end to read, where its bytes go, and the tail both
/// streams share, if the run keeps one (for a request body).
pub struct Stream {
    pub source: OwnedFd,
    pub sink: Sink,
    pub both: Option<Arc<Mutex<Tail>>>,
}

/// Where a copy writes what it reads.
pub enum Sink {
    /// crontap-run's own stream, as the command writes (`--output pass`): written through
    /// its own descriptor (1 or 2, always open), not a duplicate, so that a run holds no
    /// more descriptors than it must (see `descriptors`).
    Pass(BorrowedFd<'static>),
    /// The run's hold, for its end to print or drop (`--output on-failure`).
    Hold(Writer),
}

impl Sink {
    /// crontap-run's own stream this output belongs on.
    fn own_stream(&self) -> BorrowedFd<'static> {
        match self {
            Sink::Pass(fd) => *fd,
            Sink::Hold(writer) => match writer.which() {
                Which::Stdout => process::stdout(),
                Which::Stderr => process::stderr(),
            },
        }
    }

    /// Writes all of `data`; an error means the destination is gone.
    fn write(&self, data: &[u8]) -> io::Result<()> {
        match self {
            Sink::Pass(fd) => write_all(*fd, data).map_err(io::Error::from),
            Sink::Hold(writer) => writer.write(data),
        }
    }
}

/// A running copy of one of the command's output streams.
pub struct Tee {
    shared: Arc<Mutex<Shared>>,
    done: mpsc::Receiver<()>,
    /// Bytes the pipes could hold when the command ended, plus one chunk in hand each.
    in_flight: u64,
}

struct Shared {
    tail: Tail,
    bytes_read: u64,
    /// Time spent waiting for input, finished waits only.
    waited: Duration,
    /// Set while the copy waits for input: since when.
    waiting_since: Option<Instant>,
}

impl Shared {
    fn waited_until(&self, now: Instant) -> Duration {
        self.waited
            + self
                .waiting_since
                .map_or(Duration::ZERO, |since| now.saturating_duration_since(since))
    }
}

impl Tee {
    /// Starts copying `stream` on a new thread.
    pub fn start(stream: Stream) -> io::Result<Tee> {
        // Best effort: a smaller pipe only costs some speed.
        let _ = nix::fcntl::fcntl(
            &stream.source,
            nix::fcntl::FcntlArg::F_SETPIPE_SZ(PIPE_SIZE),
        );
        let in_flight = pipe_capacity(&stream.source) + CHUNK as u64;
        let shared = Arc::new(Mutex::new(Shared {
            tail: Tail::new(TAIL_BYTES),
            bytes_read: 0,
            waited: Duration::ZERO,
            waiting_since: None,
        }));
        let (tx, done) = mpsc::channel();
        let copy_shared = Arc::clone(&shared);
        thread::Builder::new()
            .name("output".to_owned())
            .stack_size(STACK)
            .spawn(move || {
                copy(&stream, &copy_shared);
                let _ = tx.send(());
            })?;
        Ok(Tee {
            shared,
            done,
            in_flight,
        })
    }

    /// [`finish_all`] for one copy, never told to stop.
    #[cfg(test)]
    pub fn finish(self, grace: Duration) -> Vec<u8> {
        let never = SignalLog::unwatched();
        finish_all(vec![self], grace, &never)
            .pop()
            .unwrap_or_default()
    }

    /// What has been read and waited so far, the point the give-up rules count from.
    fn mark(&self, now: Instant) -> (u64, Duration) {
        let shared = lock(&self.shared);
        (shared.bytes_read, shared.waited_until(now))
    }

    fn wait_until_done(
        &self,
        (read_at_exit, waited_at_exit): (u64, Duration),
        start: Instant,
        grace: Duration,
        stop: &SignalLog,
    ) {
        loop {
            let wait = {
                let shared = lock(&self.shared);
                let waited = shared
                    .waited_until(Instant::now())
                    .saturating_sub(waited_at_exit);
                let others_output = shared.bytes_read - read_at_exit > self.in_flight;
                // Told to stop: pass on what is at hand, but do not wait long for a reader.
                let stop = stop.stop_requested().is_some() && start.elapsed() >= STOP_DRAIN;
                if waited >= grace || others_output || stop || start.elapsed() >= STUCK_READER {
                    return;
                }
                match shared.waiting_since {
                    Some(_) => grace - waited,
                    None => RECHECK,
                }
            };
            match self.done.recv_timeout(wait) {
                Ok(()) | Err(RecvTimeoutError::Disconnected) => return,
                Err(RecvTimeoutError::Timeout) => {}
            }
        }
    }
}

/// Waits until the output of each copy has been passed on, or until what is left is clearly
/// not the command's (see the module notes), their give-up rules counted from the same
/// moment; waits less once `stop` holds a stop request. Call it once the command has ended;
/// a copy still running then is left to its thread. Returns the tail of each, whole lines
/// only ([`Kept::whole_lines`]).
pub fn finish_all(tees: Vec<Tee>, grace: Duration, stop: &SignalLog) -> Vec<Vec<u8>> {
    let start = Instant::now();
    let marks: Vec<_> = tees.iter().map(|t| t.mark(start)).collect();
    tees.into_iter()
        .zip(marks)
        .map(|(tee, mark)| {
            tee.wait_until_done(mark, start, grace, stop);
            lock(&tee.shared).tail.kept().whole_lines()
        })
        .collect()
}

fn lock(shared: &Mutex<Shared>) -> MutexGuard<'_, Shared> {
    shared.lock().unwrap_or_else(PoisonError::into_inner)
}

/// What a pipe holds at most (64 KiB unless someone enlarged it).
fn pipe_capacity(fd: &OwnedFd) -> u64 {
    nix::fcntl::fcntl(fd, nix::fcntl::FcntlArg::F_GETPIPE_SZ).map_or(64 * 1024, |n| n as u64)
}

/// The copy itself: blocking reads and writes, as `cat` does them. Should the memory run
/// out, the copy carries on without it ([`memory::copying`]).
fn copy(stream: &Stream, shared: &Mutex<Shared>) {
    memory::copying(stream.source.as_fd(), stream.sink.own_stream());
    copy_until_the_end(stream, shared);
    memory::copied();
}

fn copy_until_the_end(stream: &Stream, shared: &Mutex<Shared>) {
    let mut storage = ReadBuffer::new();
    let buf = storage.as_mut_slice();
    let mut sink_ok = true;
    let mut both = stream.both.clone().map(LineFeed::new);
    loop {
        lock(shared).waiting_since = Some(Instant::now());
        let read = nix::unistd::read(&stream.source, buf);
        let n = {
            let mut state = lock(shared);
            if let Some(since) = state.waiting_since.take() {
                state.waited += since.elapsed();
            }
            match read {
                Ok(0) => {
                    if let Some(both) = &mut both {
                        both.finish();
                    }
                    return;
                }
                Ok(n) => {
                    memory::in_hand(&buf[..n]);
                    state.bytes_read += n as u64;
                    state.tail.push(&buf[..n]);
                    n
                }
                Err(Errno::EINTR | Errno::EAGAIN) => continue,
                Err(_) => return,
            }
        };
        if let Some(both) = &mut both {
            both.push(&buf[..n]);
        }
        if fault::at("memory-in-copy") {
            memory::fail_as_if_out_of_memory();
        }
        if sink_ok && stream.sink.write(&buf[..n]).is_err() {
            sink_ok = false;
        }
        memory::in_hand(&[]);
    }
}

/// The [`CHUNK`]-byte buffer the copy reads into, starting on a page boundary.
///
/// Where a plain `vec![0; CHUNK]` starts depends on the allocator: glibc's `calloc` hands out
/// a chunk of this size 16 bytes into a fresh mapping, musl's 64-byte aligned. The kernel
/// copies each read from the pipe into this buffer, and on some processors that copy is
/// much slower into a destination that is not cache-line aligned (bench/README.md, "Output
/// and signals"). One page more than needed is allocated and the aligned part used; the page
/// is never touched, so it costs address space, not memory.
struct ReadBuffer {
    storage: Vec<u8>,
    start: usize,
}

impl ReadBuffer {
    fn new() -> ReadBuffer {
        let storage = vec![0u8; CHUNK + PAGE];
        let start = (PAGE - storage.as_ptr().addr() % PAGE) % PAGE;
        ReadBuffer { storage, start }
    }

    fn as_mut_slice(&mut self) -> &mut [u8] {
        &mut self.storage[self.start..self.start + CHUNK]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    const GRACE: Duration = Duration::from_millis(200);

    /// A pass-through to `fd`, which the caller keeps open until the copy has finished.
    fn pass(fd: &OwnedFd) -> Sink {
        use std::os::fd::AsRawFd;
        // SAFETY: every caller keeps `fd` open until after `finish`.
        Sink::Pass(unsafe { BorrowedFd::borrow_raw(fd.as_raw_fd()) })
    }

    fn null() -> OwnedFd {
        std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/null")
            .unwrap()
            .into()
    }

    fn data(len: usize) -> Vec<u8> {
        (0..=255u8).cycle().take(len).collect()
    }

    /// A stream fed with `input` by a writer thread, copied into a pipe read by another
    /// thread (after `read_delay`, to play a slow reader). Returns the tee and what the
    /// reader will have received.
    fn run(
        input: Vec<u8>,
        read_delay: Duration,
        sink_closed: bool,
    ) -> (Tee, thread::JoinHandle<Vec<u8>>, OwnedFd) {
        let (source, mut feed) = io::pipe().unwrap();
        let (mut out, sink) = io::pipe().unwrap();
        let sink = OwnedFd::from(sink);
        let tee = Tee::start(Stream {
            source: source.into(),
            sink: pass(&sink),
            both: None,
        })
        .unwrap();
        thread::spawn(move || feed.write_all(&input).unwrap());
        let reader = thread::spawn(move || {
            let mut got = Vec::new();
            if !sink_closed {
                thread::sleep(read_delay);
                out.read_to_end(&mut got).unwrap();
            }
            got
        });
        (tee, reader, sink)
    }

    #[test]
    fn read_buffer_is_a_chunk_starting_on_a_page() {
        for _ in 0..4 {
            let mut buf = ReadBuffer::new();
            let slice = buf.as_mut_slice();
            assert_eq!(slice.len(), CHUNK);
            assert_eq!(slice.as_ptr().addr() % PAGE, 0);
        }
    }

    #[test]
    fn copies_exactly_and_keeps_the_tail() {
        let (tee, reader, sink) = run(data(300_000), Duration::ZERO, false);
        let tails = tee.finish(GRACE);
        drop(sink);
        assert!(reader.join().unwrap() == data(300_000));
        assert!(
            tails == whole_lines_of_tail(&data(300_000)),
            "not the tail's whole lines"
        );
    }

    /// The last [`TAIL_BYTES`] of `all` from the first line that starts in them.
    fn whole_lines_of_tail(all: &[u8]) -> &[u8] {
        let tail = &all[all.len() - TAIL_BYTES..];
        let first_line = tail.iter().position(|&b| b == b'\n').unwrap() + 1;
        &tail[first_line..]
    }

    #[test]
    fn waits_for_a_slow_reader_beyond_the_grace() {
        // More than the two pipes hold: the copy is stuck writing until the reader starts.
        let (tee, reader, sink) = run(data(400_000), GRACE * 3, false);
        tee.finish(GRACE);
        drop(sink);
        assert_eq!(reader.join().unwrap().len(), 400_000);
    }

    #[test]
    fn keeps_draining_when_the_destination_is_gone() {
        let (source, mut feed) = io::pipe().unwrap();
        let (out, sink) = io::pipe().unwrap();
        drop(out);
        let sink = OwnedFd::from(sink);
        let tee = Tee::start(Stream {
            source: source.into(),
            sink: pass(&sink),
            both: None,
        })
        .unwrap();
        // Far more than a pipe holds: this only finishes if the copy keeps reading.
        feed.write_all(&data(1_000_000)).unwrap();
        drop(feed);
        assert!(tee.finish(GRACE) == whole_lines_of_tail(&data(1_000_000)));
    }

    #[test]
    fn gives_up_on_a_pipe_held_open_and_quiet() {
        let null = null();
        let (source, mut feed) = io::pipe().unwrap();
        let tee = Tee::start(Stream {
            source: source.into(),
            sink: pass(&null),
            both: None,
        })
        .unwrap();
        feed.write_all(b"started\n").unwrap();
        let started = Instant::now();
        let tails = tee.finish(GRACE);
        assert!(started.elapsed() < Duration::from_secs(5));
        assert_eq!(tails, b"started\n");
        drop(feed);
    }

    #[test]
    fn gives_up_on_a_pipe_held_open_and_chatty() {
        let null = null();
        let (source, mut feed) = io::pipe().unwrap();
        let tee = Tee::start(Stream {
            source: source.into(),
            sink: pass(&null),
            both: None,
        })
        .unwrap();
        // A background process that writes a little now and then, for ever.
        thread::spawn(move || {
            while feed.write_all(b"tick\n").is_ok() {
                thread::sleep(GRACE / 4);
            }
        });
        let started = Instant::now();
        tee.finish(GRACE);
        assert!(started.elapsed() < Duration::from_secs(5));
    }
}
