//! A TCP relay on loopback between crontap-run and the test's receiver that gives the
//! endpoint its behaviour, connection by connection in the order they come: passed at
//! once, held on the way for a while (a slow proxy or link), or reset once the request has
//! been written. Connections past the list pass at once.

use std::io::Read;
use std::net::{Shutdown, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use crate::harness::eventually;

#[derive(Clone, Copy, Debug)]
pub enum Act {
    Pass,
    /// The request sits unread on the wire this long, then goes on.
    Hold(Duration),
    /// The connection is reset (RST) once the first bytes of the request are in.
    Reset,
}

pub struct Front {
    pub port: u16,
    closing: Arc<AtomicBool>,
    /// Held connections not yet passed on and done with.
    held: Arc<AtomicUsize>,
}

impl Front {
    pub fn start(target: u16, acts: Vec<Act>) -> Front {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
        let port = listener.local_addr().unwrap().port();
        let closing = Arc::new(AtomicBool::new(false));
        let done = Arc::clone(&closing);
        let held = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&held);
        std::thread::spawn(move || {
            for (n, client) in listener.incoming().enumerate() {
                if done.load(Ordering::SeqCst) {
                    return;
                }
                let Ok(client) = client else { continue };
                let act = acts.get(n).copied().unwrap_or(Act::Pass);
                let counted = Arc::clone(&counted);
                if matches!(act, Act::Hold(_)) {
                    counted.fetch_add(1, Ordering::SeqCst);
                }
                std::thread::spawn(move || {
                    relay(client, target, act);
                    if matches!(act, Act::Hold(_)) {
                        counted.fetch_sub(1, Ordering::SeqCst);
                    }
                });
            }
        });
        Front {
            port,
            closing,
            held,
        }
    }

    /// Waits until every held request has reached the receiver and been answered (or
    /// `limit` passes): a request crontap-run gave up may still arrive, and the order the
    /// server saw is checked only once it has.
    pub fn settle(&self, limit: Duration) -> bool {
        eventually(limit, || self.held.load(Ordering::SeqCst) == 0)
    }
}

impl Drop for Front {
    fn drop(&mut self) {
        self.closing.store(true, Ordering::SeqCst);
        // Wakes the accepting thread so that it sees it is done.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

fn relay(client: TcpStream, target: u16, act: Act) {
    match act {
        Act::Pass => {}
        // The simulated slowness itself, not a wait for anything.
        Act::Hold(hold) => std::thread::sleep(hold),
        Act::Reset => {
            let _ = client.set_read_timeout(Some(Duration::from_secs(10)));
            let _ = (&client).read(&mut [0; 1024]);
            reset(&client);
            return;
        }
    }
    let Ok(server) = TcpStream::connect(("127.0.0.1", target)) else {
        return;
    };
    let (mut c_in, mut s_out) = (client.try_clone().unwrap(), server.try_clone().unwrap());
    let up = std::thread::spawn(move || {
        let _ = std::io::copy(&mut c_in, &mut s_out);
        let _ = s_out.shutdown(Shutdown::Write);
    });
    let (mut s_in, mut c_out) = (server, client);
    let _ = std::io::copy(&mut s_in, &mut c_out);
    let _ = c_out.shutdown(Shutdown::Write);
    let _ = up.join();
}

/// Closes `stream` with a reset: SO_LINGER on with a zero timeout, then close.
fn reset(stream: &TcpStream) {
    let linger = libc::linger {
        l_onoff: 1,
        l_linger: 0,
    };
    // SAFETY: a valid socket and a `linger` of the size given.
    unsafe {
        libc::setsockopt(
            stream.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_LINGER,
            (&raw const linger).cast(),
            std::mem::size_of::<libc::linger>() as libc::socklen_t,
        );
    }
}
