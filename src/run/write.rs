//! Writing the command's output on to crontap-run's own stdout and stderr, whatever they
//! are: a destination that is non-blocking is waited on, not given up on, and a reader that
//! takes nothing for [`STUCK_READER`] is stuck. Both the pass-through ([`tee`](super::tee))
//! and the replay of held output ([`hold`](super::hold)) write this way.

use std::os::fd::BorrowedFd;
use std::time::Duration;

use nix::errno::Errno;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};

/// How long a writer waits for a reader that takes nothing at all: what is left after the
/// job ended is a few MiB at most, so a reader this slow is stuck.
pub const STUCK_READER: Duration = Duration::from_secs(60);

/// Writes everything, waiting on a non-blocking destination instead of failing.
pub fn write_all(fd: BorrowedFd<'_>, mut data: &[u8]) -> nix::Result<()> {
    while !data.is_empty() {
        match nix::unistd::write(fd, data) {
            Ok(n) => data = &data[n..],
            Err(Errno::EINTR) => {}
            Err(Errno::EAGAIN) => {
                let mut fds = [PollFd::new(fd, PollFlags::POLLOUT)];
                match poll(&mut fds, PollTimeout::NONE) {
                    Ok(_) | Err(Errno::EINTR) => {}
                    Err(err) => return Err(err),
                }
            }
            Err(err) => return Err(err),
        }
    }
    Ok(())
}
