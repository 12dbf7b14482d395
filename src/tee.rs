//! Passes the command's output through to crontap-run's own stdout or stderr, byte for byte,
//! while keeping a bounded tail of it for the failure summary.
//!
//! Each pipe is copied by its own thread with plain blocking reads and writes, so output
//! reaches its destination as soon as the command writes it. Bytes go into the tail before
//! they are written on, so a slow reader never hides the last line from the summary.
//!
//! If the destination goes away (its reader closed), copying stops but draining goes on:
//! the command is never blocked or killed for it, and its exit status is kept.
//!
//! After the command exits, [`Tee::finish`] waits for everything it wrote to be passed on,
//! however slow the reader, but gives up on a pipe that stays open and empty for a grace
//! period: a background process the command left behind may hold it open for ever.

use std::io::{self, Read, Write};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

/// Bytes of each stream kept for the summary.
pub const TAIL_BYTES: usize = 32 * 1024;
const CHUNK: usize = 16 * 1024;
const STACK: usize = 64 * 1024;

/// A running copy of one pipe.
pub struct Tee {
    shared: Arc<Mutex<Shared>>,
    done: mpsc::Receiver<()>,
}

#[derive(Default)]
struct Shared {
    tail: Tail,
    /// Set while the copy waits in `read` for more input: since when.
    reading_since: Option<Instant>,
}

impl Tee {
    /// Starts copying `source` to `sink` on a new thread.
    pub fn start<R, W>(name: &str, source: R, sink: W) -> io::Result<Tee>
    where
        R: Read + Send + 'static,
        W: Write + Send + 'static,
    {
        let shared = Arc::new(Mutex::new(Shared::default()));
        let (tx, done) = mpsc::channel();
        let copy_shared = Arc::clone(&shared);
        thread::Builder::new()
            .name(name.to_owned())
            .stack_size(STACK)
            .spawn(move || {
                copy(source, sink, &copy_shared);
                let _ = tx.send(());
            })?;
        Ok(Tee { shared, done })
    }

    /// Waits until the pipe has been copied to its end and returns the tail. The wait stops
    /// early only when the pipe has been open with nothing in it for `grace`, counted from
    /// `exited` (when the command ended) at the earliest: what is left then belongs to a
    /// process the command left behind, and its thread is left to it.
    pub fn finish(self, exited: Instant, grace: Duration) -> Vec<u8> {
        loop {
            let reading_since = lock(&self.shared).reading_since;
            let give_up_at = reading_since.map(|since| since.max(exited) + grace);
            let now = Instant::now();
            if give_up_at.is_some_and(|at| at <= now) {
                break;
            }
            // While a write is in progress the copy is making progress; look again later.
            let wait = give_up_at.map_or(grace, |at| at - now);
            match self.done.recv_timeout(wait) {
                Ok(()) | Err(RecvTimeoutError::Disconnected) => break,
                Err(RecvTimeoutError::Timeout) => {}
            }
        }
        lock(&self.shared).tail.bytes().to_vec()
    }
}

fn lock(shared: &Mutex<Shared>) -> MutexGuard<'_, Shared> {
    shared.lock().unwrap_or_else(PoisonError::into_inner)
}

fn copy(mut source: impl Read, mut sink: impl Write, shared: &Mutex<Shared>) {
    let mut buf = vec![0u8; CHUNK];
    let mut sink_open = true;
    loop {
        lock(shared).reading_since = Some(Instant::now());
        let read = source.read(&mut buf);
        let n = {
            let mut shared = lock(shared);
            shared.reading_since = None;
            match read {
                Ok(0) => return,
                Ok(n) => {
                    shared.tail.push(&buf[..n]);
                    n
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => return,
            }
        };
        if sink_open
            && sink
                .write_all(&buf[..n])
                .and_then(|()| sink.flush())
                .is_err()
        {
            sink_open = false;
        }
    }
}

/// The last [`TAIL_BYTES`] (up to twice that between compactions) of a stream.
#[derive(Default)]
struct Tail {
    buf: Vec<u8>,
}

impl Tail {
    fn push(&mut self, chunk: &[u8]) {
        self.buf.extend_from_slice(chunk);
        if self.buf.len() > 2 * TAIL_BYTES {
            let excess = self.buf.len() - TAIL_BYTES;
            self.buf.drain(..excess);
        }
    }

    fn bytes(&self) -> &[u8] {
        let start = self.buf.len().saturating_sub(TAIL_BYTES);
        &self.buf[start..]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GRACE: Duration = Duration::from_millis(200);

    fn data() -> Vec<u8> {
        (0..=255u8).cycle().take(100_000).collect()
    }

    #[test]
    fn tail_is_bounded_and_ends_with_latest_bytes() {
        let mut tail = Tail::default();
        for i in 0..10_000u32 {
            tail.push(format!("line {i}\n").as_bytes());
            assert!(tail.buf.len() <= 2 * TAIL_BYTES + 16);
        }
        assert_eq!(tail.bytes().len(), TAIL_BYTES);
        assert!(tail.bytes().ends_with(b"line 9999\n"));
    }

    /// A sink that records what it was given, through a shared buffer.
    #[derive(Clone, Default)]
    struct Recorder(Arc<Mutex<Vec<u8>>>);

    impl Write for Recorder {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn copies_exactly() {
        let sink = Recorder::default();
        let tee = Tee::start("test", io::Cursor::new(data()), sink.clone()).unwrap();
        let tail = tee.finish(Instant::now(), GRACE);
        assert!(*sink.0.lock().unwrap() == data());
        assert_eq!(tail, data()[data().len() - TAIL_BYTES..]);
    }

    #[test]
    fn keeps_draining_when_the_sink_fails() {
        struct Broken;
        impl Write for Broken {
            fn write(&mut self, _: &[u8]) -> io::Result<usize> {
                Err(io::ErrorKind::BrokenPipe.into())
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let tee = Tee::start("test", io::Cursor::new(data()), Broken).unwrap();
        assert_eq!(
            tee.finish(Instant::now(), GRACE),
            data()[data().len() - TAIL_BYTES..]
        );
    }

    #[test]
    fn waits_for_a_slow_sink_beyond_the_grace() {
        struct Slow(Recorder);
        impl Write for Slow {
            fn write(&mut self, b: &[u8]) -> io::Result<usize> {
                thread::sleep(Duration::from_millis(60));
                self.0.write(b)
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let sink = Recorder::default();
        // 100 000 bytes in 16 KiB chunks: 7 writes, about 420 ms, twice the grace.
        let tee = Tee::start("test", io::Cursor::new(data()), Slow(sink.clone())).unwrap();
        tee.finish(Instant::now(), GRACE);
        assert_eq!(sink.0.lock().unwrap().len(), data().len());
    }

    #[test]
    fn gives_up_on_a_pipe_held_open_after_the_grace() {
        let (reader, mut writer) = io::pipe().unwrap();
        let tee = Tee::start("test", reader, io::sink()).unwrap();
        writer.write_all(b"started\n").unwrap();
        // `writer` stays open, as a background grandchild would keep it.
        let started = Instant::now();
        let tail = tee.finish(Instant::now(), GRACE);
        assert!(started.elapsed() < Duration::from_secs(5));
        assert_eq!(tail, b"started\n");
        drop(writer);
    }
}
