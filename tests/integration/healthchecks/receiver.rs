//! The receiver itself behaves as Healthchecks documents, checked with raw requests, so a
//! failure elsewhere is crontap-run's and not the receiver's.

use std::io::{Read, Write};
use std::net::TcpStream;

use super::server::{BODY_LIMIT, Class, Healthchecks, Kind};

/// Sends one request and returns the status and the body of the answer.
fn send(hc: &Healthchecks, method: &str, target: &str, body: &[u8]) -> (u16, String) {
    let mut stream = TcpStream::connect(("127.0.0.1", hc.port())).unwrap();
    let head = format!(
        "{method} {target} HTTP/1.1\r\nHost: x\r\nX-Extra: one\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(body).unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let status = answer[9..12].parse().unwrap();
    let body = answer.split_once("\r\n\r\n").unwrap().1.to_owned();
    (status, body)
}

const RID: &str = "0b6a4f5e-8d2c-4c1b-9e3a-2f1d0c9b8a7e";

#[test]
fn the_receiver_routes_and_answers_as_healthchecks() {
    let hc = Healthchecks::start();
    hc.add_check("key/job");
    let uuid = "5b3f8e4a-1c2d-4e6f-9a8b-7c6d5e4f3a2b";
    hc.add_check(uuid);

    assert_eq!(send(&hc, "GET", "/key/job", b""), (200, "OK".into()));
    assert_eq!(send(&hc, "HEAD", "/key/job/fail", b"").0, 200);
    assert_eq!(send(&hc, "POST", &format!("/{uuid}/log"), b"x").0, 200);
    assert_eq!(send(&hc, "POST", "/key/job/255", b"").0, 200);
    assert_eq!(send(&hc, "POST", "/key/job/256", b"").0, 400);
    assert_eq!(
        send(&hc, "GET", "/key/other", b""),
        (404, "not found".into())
    );
    assert_eq!(
        send(&hc, "GET", "/5b3f8e4a-1c2d-4e6f-9a8b-000000000000", b"").0,
        404
    );
    assert_eq!(
        send(&hc, "GET", "/key/new/start?create=1", b""),
        (201, "Created".into())
    );
    assert!(hc.has_check("key/new"));
    assert_eq!(send(&hc, "GET", "/key/job/start?rid=nope", b"").0, 400);

    let kinds: Vec<_> = hc.pings().iter().map(|p| p.kind).collect();
    assert_eq!(
        kinds,
        [
            Some(Kind::Success),
            Some(Kind::Fail),
            Some(Kind::Log),
            Some(Kind::Exit(255)),
            None,
            Some(Kind::Success),
            Some(Kind::Success),
            Some(Kind::Start),
            None,
        ]
    );
    let first = &hc.pings()[0];
    assert_eq!(first.header("x-extra"), Some("one"));
    assert_eq!(first.check.as_deref(), Some("key/job"));
}

#[test]
fn the_receiver_pairs_by_rid_keeps_10000_bytes_and_follows_its_script() {
    let hc = Healthchecks::start();
    hc.add_check("key/job");
    hc.script(Class::End, &[503]);
    send(&hc, "GET", &format!("/key/job/start?rid={RID}"), b"");
    let big = vec![b'a'; BODY_LIMIT + 500];
    let target = format!("/key/job/0?msg=ignored&rid={RID}");
    assert_eq!(send(&hc, "POST", &target, &big).0, 503);
    assert_eq!(send(&hc, "POST", &target, &big).0, 200);
    let ends = hc.ends();
    assert_eq!(ends.len(), 2);
    assert!(ends[0].duration.is_none(), "a refused end pairs nothing");
    assert!(ends[1].duration.is_some());
    assert_eq!(ends[1].body.len(), BODY_LIMIT);
    assert_eq!(ends[1].body_len, BODY_LIMIT + 500);
    assert_eq!(ends[1].rid.as_deref(), Some(RID));
}

#[test]
fn the_receiver_holds_starts_until_released() {
    let hc = Healthchecks::start();
    hc.add_check("key/job");
    hc.hold_starts();
    let port = hc.port();
    let client = std::thread::spawn(move || {
        let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
        stream
            .write_all(b"GET /key/job/start HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            .unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).unwrap();
        answer
    });
    assert!(crate::harness::eventually(
        std::time::Duration::from_secs(10),
        || !hc.starts().is_empty()
    ));
    assert!(hc.starts()[0].answered_at.is_none());
    // Other pings are answered meanwhile.
    assert_eq!(send(&hc, "GET", "/key/job", b"").0, 200);
    hc.release_starts();
    assert!(client.join().unwrap().starts_with("HTTP/1.1 200"));
    assert!(hc.starts()[0].answered_at.is_some());
}
