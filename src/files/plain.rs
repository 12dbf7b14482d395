//! What crontap-run expects where it keeps a file: a plain one, a regular file with one
//! name and of a size it could have written. Anything else found there (a link, a FIFO, a
//! directory, a file hard-linked elsewhere) was planted or left by a restore: reads refuse
//! it, and writes move it aside and make a new file, so that it never blocks a job for good.

use std::io;

/// What was found where crontap-run expected a plain file of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotPlain {
    Link,
    HardLinked,
    /// Larger than [`READ_MAX`].
    TooLarge,
    /// A FIFO, a socket, a device or a directory.
    Other,
}

impl std::fmt::Display for NotPlain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            NotPlain::Link => "it is a symbolic link, which crontap-run does not follow",
            NotPlain::HardLinked => "it has other hard links",
            NotPlain::TooLarge => "it is larger than crontap-run ever writes one",
            NotPlain::Other => "not a regular file",
        })
    }
}

impl std::error::Error for NotPlain {}

impl From<NotPlain> for io::Error {
    fn from(why: NotPlain) -> io::Error {
        io::Error::other(why)
    }
}

impl NotPlain {
    /// Whether `err` says a file was not plain.
    pub fn of(err: &io::Error) -> Option<NotPlain> {
        err.get_ref()?.downcast_ref::<NotPlain>().copied()
    }

    /// [`NotPlain::of`] anywhere in an error's chain.
    pub fn in_chain(err: &anyhow::Error) -> bool {
        err.chain()
            .filter_map(|cause| cause.downcast_ref::<io::Error>())
            .any(|io| NotPlain::of(io).is_some())
    }
}
