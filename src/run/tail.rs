//! The tails of the command's output: the last bytes of each stream, for the summary, and
//! the last lines of both streams together, in the order they came, for a request body.
//!
//! The shared tail is fed whole lines ([`LineFeed`]): a line that one stream writes in
//! pieces goes in once it ends, so that the other stream's output never lands inside it and
//! a secret printed in two writes (`password=`, then the value) is still whole when the body
//! is scrubbed. Of a line longer than the tail itself only its end is held back, in a ring
//! of the tail's size, so memory stays bounded and the line still goes in whole, as its end.

use std::sync::{Arc, Mutex, PoisonError};

/// The last bytes of a stream (or of both), in a ring allocated on first use: each byte
/// is copied once, whatever the volume.
pub struct Tail {
    capacity: usize,
    ring: Vec<u8>,
    /// Where the next byte goes.
    pos: usize,
    /// Whether the ring has wrapped at least once.
    full: bool,
    /// Whether any byte was pushed out.
    cut: bool,
}

/// What a tail kept: its bytes, oldest first, and whether older ones were dropped.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Kept {
    pub bytes: Vec<u8>,
    pub cut: bool,
}

impl Kept {
    /// The lines held whole: when older bytes were dropped, the first line is only the end
    /// of one and is left out, since what made a value on it a secret (its key's name) may
    /// be gone with its start. Empty when no line starts inside the tail.
    pub fn whole_lines(self) -> Vec<u8> {
        let mut bytes = self.bytes;
        if self.cut {
            let start = bytes
                .iter()
                .position(|&b| b == b'\n')
                .map_or(bytes.len(), |i| i + 1);
            bytes.drain(..start);
        }
        bytes
    }
}

impl Tail {
    /// A tail of the last `capacity` bytes (at least one).
    pub fn new(capacity: usize) -> Tail {
        Tail {
            capacity: capacity.max(1),
            ring: Vec::new(),
            pos: 0,
            full: false,
            cut: false,
        }
    }

    pub fn push(&mut self, chunk: &[u8]) {
        let cap = self.capacity;
        if self.ring.is_empty() {
            self.ring = vec![0; cap];
        }
        // Only the end of a large chunk can matter.
        self.cut |= chunk.len() > cap;
        let chunk = &chunk[chunk.len().saturating_sub(cap)..];
        let first = chunk.len().min(cap - self.pos);
        self.ring[self.pos..self.pos + first].copy_from_slice(&chunk[..first]);
        let rest = &chunk[first..];
        self.ring[..rest.len()].copy_from_slice(rest);
        let end = self.pos + chunk.len();
        // Bytes were overwritten if the ring was full already, or this push wrapped past
        // its end onto bytes written before.
        self.cut |= (self.full && !chunk.is_empty()) || end > cap;
        self.full |= end >= cap;
        self.pos = end % cap;
    }

    pub fn bytes(&self) -> Vec<u8> {
        if self.full {
            [&self.ring[self.pos..], &self.ring[..self.pos]].concat()
        } else {
            self.ring[..self.pos].to_vec()
        }
    }

    /// What the tail holds now.
    pub fn kept(&self) -> Kept {
        Kept {
            bytes: self.bytes(),
            cut: self.cut,
        }
    }
}

/// One stream's way into the tail both streams share: the part of a line not yet ended is
/// held back until it ends.
pub struct LineFeed {
    both: Arc<Mutex<Tail>>,
    /// The shared tail's capacity.
    capacity: usize,
    /// The end of the stream's output that no newline has ended yet.
    pending: Vec<u8>,
    /// The end of a line not yet ended that outgrew the shared tail: only its last bytes
    /// can count (`pending` is then empty).
    overlong: Option<Tail>,
}

impl LineFeed {
    pub fn new(both: Arc<Mutex<Tail>>) -> LineFeed {
        let capacity = both.lock().unwrap_or_else(PoisonError::into_inner).capacity;
        LineFeed {
            both,
            capacity,
            pending: Vec::new(),
            overlong: None,
        }
    }

    /// Takes what the stream wrote next: its whole lines go into the shared tail now.
    pub fn push(&mut self, chunk: &[u8]) {
        let (whole, rest) = match chunk.iter().rposition(|&b| b == b'\n') {
            Some(at) => chunk.split_at(at + 1),
            None => (&chunk[..0], chunk),
        };
        if !whole.is_empty() {
            self.pass_on(whole);
        }
        if let Some(overlong) = &mut self.overlong {
            overlong.push(rest);
        } else if self.pending.len() + rest.len() > self.capacity {
            // A line longer than the tail: only its end can count.
            let mut overlong = Tail::new(self.capacity);
            overlong.push(&self.pending);
            overlong.push(rest);
            self.pending = Vec::new();
            self.overlong = Some(overlong);
        } else {
            self.pending.extend_from_slice(rest);
        }
    }

    /// The stream has ended: a last line with no newline goes in too.
    pub fn finish(&mut self) {
        self.pass_on(&[]);
    }

    /// Puts what was held back, then `more`, into the shared tail.
    fn pass_on(&mut self, more: &[u8]) {
        let overlong = self.overlong.take().map(|t| t.bytes());
        let mut tail = self.both.lock().unwrap_or_else(PoisonError::into_inner);
        // The line's start is gone, whether or not the shared tail overflows now.
        tail.cut |= overlong.is_some();
        tail.push(overlong.as_deref().unwrap_or(&self.pending));
        tail.push(more);
        drop(tail);
        self.pending.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TAIL_BYTES: usize = 32 * 1024;

    fn data(len: usize) -> Vec<u8> {
        (0..=255u8).cycle().take(len).collect()
    }

    #[test]
    fn tail_is_bounded_and_ends_with_latest_bytes() {
        let mut tail = Tail::new(TAIL_BYTES);
        for i in 0..10_000u32 {
            tail.push(format!("line {i}\n").as_bytes());
            assert_eq!(tail.ring.len(), TAIL_BYTES);
        }
        assert!(tail.bytes().ends_with(b"line 9999\n"));
        assert_eq!(tail.bytes().len(), TAIL_BYTES);
        tail.push(&data(100_000));
        assert_eq!(tail.bytes(), &data(100_000)[100_000 - TAIL_BYTES..]);
        let mut short = Tail::new(TAIL_BYTES);
        short.push(b"a");
        short.push(b"bc");
        assert_eq!(short.bytes(), b"abc");
        assert!(Tail::new(TAIL_BYTES).bytes().is_empty());
    }

    fn kept(bytes: &[u8], cut: bool) -> Kept {
        Kept {
            bytes: bytes.to_vec(),
            cut,
        }
    }

    #[test]
    fn only_whole_lines_are_handed_on() {
        // Nothing dropped: everything is whole, a last line without its newline too.
        assert_eq!(kept(b"a=1\nb=2", false).whole_lines(), b"a=1\nb=2");
        // The start of the first line fell out: its key may be gone, so it goes.
        assert_eq!(kept(b"hunter2\nlast\n", true).whole_lines(), b"last\n");
        assert_eq!(kept(b"only the end of one", true).whole_lines(), b"");
        assert_eq!(kept(b"end\n", true).whole_lines(), b"");
        // Through a real tail: the first line's start is pushed out.
        let mut tail = Tail::new(16);
        tail.push(b"password=Hunter2Secret\nboom\n");
        assert_eq!(tail.kept().whole_lines(), b"boom\n");
    }

    #[test]
    fn a_tail_says_whether_it_dropped_bytes() {
        let mut tail = Tail::new(4);
        tail.push(b"ab");
        tail.push(b"cd");
        assert_eq!(tail.kept(), kept(b"abcd", false));
        tail.push(b"e");
        assert_eq!(tail.kept(), kept(b"bcde", true));
        let mut tail = Tail::new(4);
        tail.push(b"abc");
        tail.push(b"de");
        assert_eq!(tail.kept(), kept(b"bcde", true));
        let mut tail = Tail::new(4);
        tail.push(b"abcdef");
        assert_eq!(tail.kept(), kept(b"cdef", true));
    }

    #[test]
    fn both_streams_share_whole_lines() {
        let both = Arc::new(Mutex::new(Tail::new(1024)));
        let mut out = LineFeed::new(Arc::clone(&both));
        let mut err = LineFeed::new(Arc::clone(&both));
        out.push(b"db password=");
        err.push(b"warn: slow\n");
        out.push(b"hunter2xyz\nnext ");
        err.push(b"x");
        out.push(b"line\n");
        err.finish();
        out.finish();
        let kept = both.lock().unwrap().kept();
        assert_eq!(
            kept.bytes,
            b"warn: slow\ndb password=hunter2xyz\nnext line\nx"
        );
        assert!(!kept.cut);
    }

    /// Held back as its last bytes, and still whole: the other stream's lines stay out of
    /// it, and a value written after its key in the stream's next write follows the key.
    #[test]
    fn a_line_longer_than_the_tail_goes_in_whole_as_its_end() {
        let both = Arc::new(Mutex::new(Tail::new(12)));
        let mut out = LineFeed::new(Arc::clone(&both));
        let mut err = LineFeed::new(Arc::clone(&both));
        out.push(b"abcdef");
        out.push(b"ghijkl pw=");
        assert!(both.lock().unwrap().kept().bytes.is_empty());
        assert!(out.pending.is_empty(), "bounded by the ring");
        err.push(b"warn\n");
        out.push(b"s3cr\n");
        let kept = both.lock().unwrap().kept();
        assert_eq!(kept.bytes, b"jkl pw=s3cr\n");
        assert!(kept.cut);
        out.push(b"next\n");
        assert_eq!(both.lock().unwrap().kept().bytes, b"w=s3cr\nnext\n");
    }

    /// One line longer than the tail and nothing else: its start is gone, and the tail
    /// says so though the line's end fills it exactly.
    #[test]
    fn an_overlong_line_alone_is_marked_cut() {
        let both = Arc::new(Mutex::new(Tail::new(8)));
        let mut out = LineFeed::new(Arc::clone(&both));
        out.push(b"tok=abcdefghijkl");
        out.finish();
        let kept = both.lock().unwrap().kept();
        assert_eq!(kept.bytes, b"efghijkl");
        assert!(kept.cut);
    }
}
