//! A stream of bytes kept for later: a small buffer in memory that spills to an unnamed
//! temporary file, read back in order. [`hold`](super::hold) keeps each of the command's
//! streams in one of these for `--output on-failure`.
//!
//! Memory stays bounded whatever the volume: at most [`BUFFER`] bytes are in memory, the
//! rest is in the file. The file has no name from the moment it exists (`O_TMPFILE`), so
//! the kernel frees it when crontap-run closes it or dies, SIGKILL included, and no other
//! process can find it. Where the file system has no `O_TMPFILE`, it is created under an
//! unpredictable name with `O_EXCL` (so a planted file or symbolic link is never opened)
//! and unlinked at once. Either way it is mode 0600 and closed on exec, so the job never
//! inherits it.
//!
//! A run whose output fits in the buffer creates no file at all.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// Bytes of a stream kept in memory before they go to the file.
pub const BUFFER: usize = 64 * 1024;
/// Names tried for a named-then-unlinked file before giving up (each is random, so a
/// clash means someone is planting names).
const NAME_TRIES: usize = 8;

/// A spill that could not be written: how many bytes of the chunk being pushed were kept
/// (the rest were not), and why.
#[derive(Debug)]
pub struct Full {
    pub kept: usize,
    pub error: io::Error,
}

/// The bytes pushed so far: the first `in_file` in the file, the rest in `memory`.
pub struct Spool {
    dir: PathBuf,
    memory: Vec<u8>,
    file: Option<File>,
    in_file: u64,
}

impl Spool {
    /// An empty spool that spills into `dir`.
    pub fn new(dir: &Path) -> Spool {
        Spool {
            dir: dir.to_owned(),
            memory: Vec::new(),
            file: None,
            in_file: 0,
        }
    }

    /// Forgets everything held: the buffer is freed, and the file with it (it has no name,
    /// so closing it frees its space).
    pub fn clear(&mut self) {
        *self = Spool::new(&self.dir);
    }

    /// How many bytes it holds.
    pub fn len(&self) -> u64 {
        self.in_file + self.memory.len() as u64
    }

    /// Appends `chunk`. The buffer fills first and goes to the file whole when full, so
    /// the file is written in large pieces. If the file cannot be created or written
    /// (disk full), everything kept so far stays readable and [`Full`] says how much of
    /// `chunk` was kept.
    pub fn push(&mut self, chunk: &[u8]) -> Result<(), Full> {
        let mut kept = 0;
        while kept < chunk.len() {
            if self.memory.len() == BUFFER {
                self.flush().map_err(|error| Full { kept, error })?;
            }
            if self.memory.capacity() == 0 {
                self.memory.reserve_exact(BUFFER);
            }
            let room = BUFFER - self.memory.len();
            let take = room.min(chunk.len() - kept);
            self.memory.extend_from_slice(&chunk[kept..kept + take]);
            kept += take;
        }
        Ok(())
    }

    /// Moves the buffer to the end of the file. What a failed write did not take stays in
    /// memory, so no byte is lost.
    fn flush(&mut self) -> io::Result<()> {
        if self.file.is_none() {
            self.file = Some(unnamed_file(&self.dir)?);
        }
        let file = self.file.as_ref().expect("just created");
        let mut written = 0;
        let result = loop {
            if written == self.memory.len() {
                break Ok(());
            }
            match file.write_at(&self.memory[written..], self.in_file) {
                Ok(0) => break Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => {
                    written += n;
                    self.in_file += n as u64;
                }
                Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                Err(err) => break Err(err),
            }
        };
        self.memory.drain(..written);
        result
    }

    /// Hands bytes `from..to` to `out`, in order, in pieces of at most [`BUFFER`] bytes.
    /// Stops at the first error of `out`'s, or of reading the file back.
    pub fn read_range(
        &self,
        from: u64,
        to: u64,
        out: &mut dyn FnMut(&[u8]) -> io::Result<()>,
    ) -> io::Result<()> {
        let to = to.min(self.len());
        let mut at = from;
        if at < self.in_file.min(to) {
            let file = self.file.as_ref().expect("bytes in the file");
            let mut piece = vec![0; BUFFER];
            while at < self.in_file.min(to) {
                let want = (self.in_file.min(to) - at).min(BUFFER as u64) as usize;
                let n = match file.read_at(&mut piece[..want], at) {
                    Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
                    Ok(n) => n,
                    Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                    Err(err) => return Err(err),
                };
                out(&piece[..n])?;
                at += n as u64;
            }
        }
        if at < to {
            let start = (at - self.in_file) as usize;
            let end = (to - self.in_file) as usize;
            out(&self.memory[start..end])?;
        }
        Ok(())
    }
}

/// A new file in `dir` that no name leads to: `O_TMPFILE`, or, where the file system has
/// none, a file created exclusively under a random name and unlinked at once.
fn unnamed_file(dir: &Path) -> io::Result<File> {
    let opened = OpenOptions::new()
        .read(true)
        .write(true)
        .mode(0o600)
        .custom_flags(libc::O_TMPFILE)
        .open(dir);
    match opened {
        // Kernels before 3.11 read O_TMPFILE as O_DIRECTORY (EISDIR); file systems without
        // it say EOPNOTSUPP.
        Err(err) if matches!(err.raw_os_error(), Some(libc::EOPNOTSUPP | libc::EISDIR)) => {
            named_then_unlinked(dir)
        }
        other => other,
    }
}

/// The fallback of [`unnamed_file`]. A random name, so nobody can plant something there
/// in advance, and `O_EXCL` (which never follows a symbolic link) in case someone does.
fn named_then_unlinked(dir: &Path) -> io::Result<File> {
    let mut last = io::ErrorKind::AlreadyExists.into();
    for _ in 0..NAME_TRIES {
        let name = format!(".crontap-run-{}", crate::random::hex()?);
        let path = dir.join(name);
        match create_exclusive(&path) {
            Ok(file) => {
                std::fs::remove_file(&path)?;
                return Ok(file);
            }
            Err(err) if err.kind() == io::ErrorKind::AlreadyExists => last = err,
            Err(err) => return Err(err),
        }
    }
    Err(last)
}

/// Creates `path`, mode 0600, failing if anything (a link included) is there already.
fn create_exclusive(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn data(len: usize) -> Vec<u8> {
        (0..len).map(|i| (i * 7 % 251) as u8).collect()
    }

    fn read_all(spool: &Spool, from: u64, to: u64) -> Vec<u8> {
        let mut got = Vec::new();
        spool
            .read_range(from, to, &mut |bytes| {
                got.extend_from_slice(bytes);
                Ok(())
            })
            .unwrap();
        got
    }

    fn names(dir: &Path) -> Vec<String> {
        std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn small_output_stays_in_memory_and_creates_no_file() {
        let dir = tempfile::tempdir().unwrap();
        let mut spool = Spool::new(dir.path());
        spool.push(b"hello ").unwrap();
        spool.push(&data(BUFFER - 6)).unwrap();
        assert!(spool.file.is_none());
        assert_eq!(spool.len(), BUFFER as u64);
        assert_eq!(read_all(&spool, 0, 6), b"hello ");
    }

    #[test]
    fn large_output_spills_and_reads_back_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let mut spool = Spool::new(dir.path());
        let input = data(5 * BUFFER + 123);
        for piece in input.chunks(10_000) {
            spool.push(piece).unwrap();
        }
        assert!(spool.memory.len() <= BUFFER);
        assert!(spool.in_file > 0);
        assert!(read_all(&spool, 0, u64::MAX) == input);
        let (a, b) = (BUFFER as u64 - 5, 3 * BUFFER as u64 + 9);
        assert!(read_all(&spool, a, b) == input[a as usize..b as usize]);
        // The file has no name, and only its owner may read it.
        assert!(names(dir.path()).is_empty(), "{:?}", names(dir.path()));
        let mode = spool
            .file
            .as_ref()
            .unwrap()
            .metadata()
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    #[test]
    fn a_spill_that_cannot_be_made_keeps_what_was_pushed() {
        let mut spool = Spool::new(Path::new("/nonexistent/crontap-run-test"));
        let input = data(BUFFER + 10);
        let full = spool.push(&input).unwrap_err();
        assert_eq!(full.kept, BUFFER);
        assert_eq!(full.error.kind(), io::ErrorKind::NotFound);
        assert!(read_all(&spool, 0, u64::MAX) == input[..BUFFER]);
    }

    #[test]
    fn the_fallback_leaves_no_name_and_never_opens_a_planted_link() {
        let dir = tempfile::tempdir().unwrap();
        let file = named_then_unlinked(dir.path()).unwrap();
        assert!(names(dir.path()).is_empty());
        assert_eq!(file.metadata().unwrap().permissions().mode() & 0o777, 0o600);

        let target = dir.path().join("target");
        std::fs::write(&target, "keep").unwrap();
        let planted = dir.path().join("planted");
        std::os::unix::fs::symlink(&target, &planted).unwrap();
        let err = create_exclusive(&planted).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::AlreadyExists);
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep");
    }
}
