//! Passes one of the command's output streams through to crontap-run's own, byte for byte,
//! while keeping a bounded tail of it for the failure summary.
//!
//! Each stream is copied by its own thread with plain blocking reads and writes: output
//! reaches the terminal as soon as the command writes it, stdout and stderr stay separate,
//! and a slow reader of one stream never stalls the other. If crontap-run's own stream goes
//! away (reader closed), copying stops but draining goes on, so the command is never blocked
//! or killed by a full pipe and its exit status is kept.

use std::io::{self, Read, Write};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;
use std::time::Instant;

/// Bytes of each stream kept for the summary.
pub const TAIL_BYTES: usize = 32 * 1024;
const CHUNK: usize = 16 * 1024;
const STACK: usize = 64 * 1024;

/// A running copy of one stream.
pub struct Tee {
    tail: Arc<Mutex<Tail>>,
    done: mpsc::Receiver<()>,
}

impl Tee {
    /// Starts copying `source` to `sink` on a new thread.
    pub fn start<R, W>(name: &str, source: R, sink: W) -> io::Result<Tee>
    where
        R: Read + Send + 'static,
        W: Write + Send + 'static,
    {
        let tail = Arc::new(Mutex::new(Tail::default()));
        let (tx, done) = mpsc::channel();
        let shared = Arc::clone(&tail);
        thread::Builder::new()
            .name(name.to_owned())
            .stack_size(STACK)
            .spawn(move || {
                copy(source, sink, &shared);
                let _ = tx.send(());
            })?;
        Ok(Tee { tail, done })
    }

    /// Waits until the stream ends or `deadline` passes, then returns the tail. A stream still
    /// open at the deadline (a background grandchild holding the pipe) is left to its thread.
    pub fn finish(self, deadline: Instant) -> Vec<u8> {
        let _ = self
            .done
            .recv_timeout(deadline.saturating_duration_since(Instant::now()));
        let tail = self.tail.lock().unwrap_or_else(PoisonError::into_inner);
        tail.bytes().to_vec()
    }
}

fn copy(mut source: impl Read, mut sink: impl Write, tail: &Mutex<Tail>) {
    let mut buf = vec![0u8; CHUNK];
    let mut sink_open = true;
    loop {
        let n = match source.read(&mut buf) {
            Ok(0) => return,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => return,
        };
        let chunk = &buf[..n];
        if sink_open && sink.write_all(chunk).and_then(|()| sink.flush()).is_err() {
            sink_open = false;
        }
        tail.lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(chunk);
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
    use std::time::Duration;

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

    #[test]
    fn copies_exactly_and_keeps_tail_when_sink_fails() {
        struct Broken;
        impl Write for Broken {
            fn write(&mut self, _: &[u8]) -> io::Result<usize> {
                Err(io::ErrorKind::BrokenPipe.into())
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let data: Vec<u8> = (0..=255u8).cycle().take(100_000).collect();
        let tee = Tee::start("test", io::Cursor::new(data.clone()), Broken).unwrap();
        let tail = tee.finish(Instant::now() + Duration::from_secs(5));
        assert_eq!(tail, data[data.len() - TAIL_BYTES..]);
    }
}
