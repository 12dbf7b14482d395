//! The crontap protocol's requests, byte for byte: a raw TCP receiver on 127.0.0.1 records
//! exactly what arrives, so any change to the request line or the headers (their names,
//! values, case or order) fails here. The expected bytes are written down as the binary
//! sends them today.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use crate::harness::{Crontap, SECRET};

/// A receiver that reads whole HTTP requests (head, then the body by `Content-Length`),
/// answers each with a fixed `200 OK` and keeps the exact bytes.
pub(crate) struct RawReceiver {
    port: u16,
    requests: Arc<Mutex<Vec<Vec<u8>>>>,
    stop: Arc<std::sync::atomic::AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

const ANSWER: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nOK";

/// How a [`RawReceiver`] answers a request, given its bytes.
type Answer = fn(&[u8]) -> Vec<u8>;

impl RawReceiver {
    pub(crate) fn start() -> RawReceiver {
        RawReceiver::answering(|_| ANSWER.to_vec())
    }

    /// A receiver that answers each request as `answer` says.
    pub(crate) fn answering(answer: Answer) -> RawReceiver {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
        let port = listener.local_addr().unwrap().port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (rec, halt) = (Arc::clone(&requests), Arc::clone(&stop));
        let thread = std::thread::spawn(move || {
            for stream in listener.incoming() {
                if halt.load(std::sync::atomic::Ordering::SeqCst) {
                    return;
                }
                let Ok(mut stream) = stream else { continue };
                if let Some(bytes) = read_request(&mut stream) {
                    let answer = answer(&bytes);
                    rec.lock().unwrap().push(bytes);
                    let _ = stream.write_all(&answer);
                    let _ = stream.flush();
                }
            }
        });
        RawReceiver {
            port,
            requests,
            stop,
            thread: Some(thread),
        }
    }

    pub(crate) fn host(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    pub(crate) fn url(&self) -> String {
        format!("http://{}/ping/{SECRET}", self.host())
    }

    pub(crate) fn requests(&self) -> Vec<Vec<u8>> {
        self.requests.lock().unwrap().clone()
    }

    /// The only request, as text (it is ASCII); fails if there were none or several.
    pub(crate) fn only(&self) -> String {
        let requests = self.requests();
        assert_eq!(requests.len(), 1, "expected one request, got {requests:?}");
        String::from_utf8(requests[0].clone()).expect("an ASCII request")
    }
}

impl Drop for RawReceiver {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        // Wake the accept loop.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// One whole request from `stream`: the head up to the blank line, then `Content-Length`
/// bytes of body. `None` for a connection closed before a whole head.
fn read_request(stream: &mut TcpStream) -> Option<Vec<u8>> {
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(30)))
        .ok()?;
    let mut reader = BufReader::new(stream);
    let mut bytes = Vec::new();
    let mut length = 0usize;
    loop {
        let mut line = Vec::new();
        if reader.read_until(b'\n', &mut line).ok()? == 0 {
            return None;
        }
        bytes.extend_from_slice(&line);
        if line == b"\r\n" || line == b"\n" {
            break;
        }
        let text = String::from_utf8_lossy(&line);
        if let Some((name, value)) = text.split_once(':')
            && name.trim().eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().ok()?;
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    bytes.extend_from_slice(&body);
    Some(bytes)
}

const USER_AGENT: &str = concat!("crontap-run/", env!("CARGO_PKG_VERSION"));

#[test]
fn the_success_request_is_exactly_as_today() {
    let receiver = RawReceiver::start();
    let out = Crontap::with_url(&receiver.url()).sh("echo fine");
    assert_eq!(out.code, 0, "{}", out.stderr);
    let expected = format!(
        "GET /ping/{SECRET} HTTP/1.1\r\n\
         accept: */*\r\n\
         user-agent: {USER_AGENT}\r\n\
         host: {}\r\n\
         \r\n",
        receiver.host()
    );
    assert_eq!(receiver.only(), expected);
}

#[test]
fn the_failure_request_is_exactly_as_today() {
    let receiver = RawReceiver::start();
    let out = Crontap::with_url(&receiver.url()).sh("echo boom >&2; exit 3");
    assert_eq!(out.code, 3, "{}", out.stderr);
    let request = receiver.only();
    let (request_line, rest) = request.split_once("\r\n").expect("a request line");
    // Only the duration varies: `exit 3 after <duration>: boom`, percent-encoded.
    let pattern = format!(
        r"^GET /ping/{SECRET}/fail\?msg=exit%203%20after%20[0-9.]+m?s%3A%20boom HTTP/1\.1$"
    );
    assert!(
        regex::Regex::new(&pattern).unwrap().is_match(request_line),
        "{request_line}"
    );
    let expected = format!(
        "accept: */*\r\n\
         user-agent: {USER_AGENT}\r\n\
         host: {}\r\n\
         \r\n",
        receiver.host()
    );
    assert_eq!(rest, expected);
}

/// A POST answered with 301, 302 or 303 is not followed: the redirect would turn it into a
/// GET without its body, and the service would record a report with nothing in it. The run
/// says so in one line, and keeps the command's status.
#[test]
fn a_post_is_never_redirected_into_a_get() {
    let cases: [(&str, Answer); 3] = [
        ("301", |r| redirect_posts(r, "301 Moved Permanently")),
        ("302", |r| redirect_posts(r, "302 Found")),
        ("303", |r| redirect_posts(r, "303 See Other")),
    ];
    for (code, answer) in cases {
        let receiver = RawReceiver::answering(answer);
        let out = Crontap::with_url(&receiver.url())
            .args(["--protocol", "healthchecks", "--ping-retries", "0"])
            .sh("echo out; exit 2");
        assert_eq!(out.code, 2, "{code}: {}", out.stderr);
        let lines: Vec<String> = receiver
            .requests()
            .iter()
            .map(|r| {
                String::from_utf8_lossy(r)
                    .lines()
                    .next()
                    .unwrap_or("")
                    .to_owned()
            })
            .collect();
        assert_eq!(lines.len(), 2, "{code}: {lines:?}");
        assert!(lines[0].starts_with("GET /ping/"), "{code}: {lines:?}");
        assert!(lines[1].starts_with("POST /ping/"), "{code}: {lines:?}");
        assert!(
            out.stderr.contains("would lose its body; refused"),
            "{code}: {}",
            out.stderr
        );
        assert_eq!(out.stderr.lines().count(), 1, "{code}: {}", out.stderr);
    }
}

/// 200 to a GET; a POST is redirected with `status` to another path on the same host.
fn redirect_posts(request: &[u8], status: &str) -> Vec<u8> {
    match request.starts_with(b"POST ") {
        true => format!(
            "HTTP/1.1 {status}\r\nLocation: /moved\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        )
        .into_bytes(),
        false => ANSWER.to_vec(),
    }
}

/// The redirects that keep a request as it was are followed, on the client the start and
/// the end share: 301, 302, 303, 307 and 308 for the start's GET (a GET stays a GET), 307
/// and 308 for the end's POST, which arrives at the new place with its body.
#[test]
fn a_get_follows_every_redirect_and_a_post_follows_307_and_308() {
    let cases: [(&str, Answer); 5] = [
        ("301", |r| redirect_once(r, "301 Moved Permanently")),
        ("302", |r| redirect_once(r, "302 Found")),
        ("303", |r| redirect_once(r, "303 See Other")),
        ("307", |r| redirect_once(r, "307 Temporary Redirect")),
        ("308", |r| redirect_once(r, "308 Permanent Redirect")),
    ];
    for (code, answer) in cases {
        let receiver = RawReceiver::answering(answer);
        let out = Crontap::with_url(&receiver.url())
            .args(["--protocol", "healthchecks", "--ping-retries", "0"])
            .sh("echo out; exit 2");
        assert_eq!(out.code, 2, "{code}: {}", out.stderr);
        let requests: Vec<String> = receiver
            .requests()
            .iter()
            .map(|r| String::from_utf8_lossy(r).into_owned())
            .collect();
        let lines: Vec<&str> = requests
            .iter()
            .map(|r| r.lines().next().unwrap_or(""))
            .collect();
        let post_follows = matches!(code, "307" | "308");
        assert_eq!(
            lines.len(),
            3 + usize::from(post_follows),
            "{code}: {lines:?}"
        );
        assert!(lines[0].starts_with("GET /ping/"), "{code}: {lines:?}");
        assert!(lines[0].contains("/start?rid="), "{code}: {lines:?}");
        assert!(lines[1].starts_with("GET /moved "), "{code}: {lines:?}");
        assert!(lines[2].starts_with("POST /ping/"), "{code}: {lines:?}");
        if post_follows {
            assert!(lines[3].starts_with("POST /moved "), "{code}: {lines:?}");
            assert!(requests[3].contains("\r\n\r\nexit 2 after "), "{code}");
            assert!(
                requests[3].ends_with(": out\nout"),
                "{code}: {}",
                requests[3]
            );
            assert_eq!(out.stderr, "", "{code}");
        } else {
            assert!(
                out.stderr.contains("would lose its body; refused"),
                "{code}: {}",
                out.stderr
            );
            assert_eq!(out.stderr.lines().count(), 1, "{code}: {}", out.stderr);
        }
    }
}

/// 200 to a request for `/moved`; any other is redirected there with `status`.
fn redirect_once(request: &[u8], status: &str) -> Vec<u8> {
    let line = request.split(|&b| b == b'\r').next().unwrap_or_default();
    match line.windows(8).any(|w| w == b" /moved ") {
        true => ANSWER.to_vec(),
        false => format!(
            "HTTP/1.1 {status}\r\nLocation: /moved\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        )
        .into_bytes(),
    }
}
