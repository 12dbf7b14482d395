//! Memory: under every address-space limit (`ulimit -v`) in which the command alone runs,
//! crontap-run runs it and exits with its status (a report there is no memory for is
//! skipped with one line), or refuses before starting it with 125 and one line naming the
//! limit; never an abort (134) or a segfault (139). Below the limit at which the kernel can
//! load the binary at all, nothing of crontap-run runs: the kernel kills the exec with
//! SIGSEGV, or the dynamic loader of a glibc build says it cannot map a library.

use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::Command;

use crate::harness::{BINARY, Crontap, Receiver};

const MIB: u64 = 1024 * 1024;

/// The limits every case goes through, at least: up to 16 MB in 1 MB steps.
const TOP: u64 = 16 * MIB;

/// Sets the address-space limit of the process about to execute, between fork and exec.
fn limit_address_space(command: &mut Command, bytes: u64) {
    // SAFETY: only setrlimit, a system call, between fork and exec.
    unsafe {
        command.pre_exec(move || {
            let rl = libc::rlimit {
                rlim_cur: bytes,
                rlim_max: bytes,
            };
            match libc::setrlimit(libc::RLIMIT_AS, &rl) {
                0 => Ok(()),
                _ => Err(std::io::Error::last_os_error()),
            }
        });
    }
}

/// The lowest limit, in 1 MB steps down from [`TOP`], at which `sh -c 'exit 5'` still exits 5.
fn command_floor() -> u64 {
    let mut floor = TOP;
    while floor > MIB {
        let mut sh = Command::new("sh");
        sh.args(["-c", "exit 5"]);
        limit_address_space(&mut sh, floor - MIB);
        match sh.output() {
            Ok(out) if out.status.code() == Some(5) => floor -= MIB,
            _ => break,
        }
    }
    floor
}

/// The address space the binary's own segments span (its ELF program headers): the kernel
/// must map at least that to execute it.
fn binary_span() -> u64 {
    let elf = std::fs::read(BINARY).unwrap();
    let word = |at: usize, n: usize| {
        let mut bytes = [0u8; 8];
        bytes[..n].copy_from_slice(&elf[at..at + n]);
        u64::from_le_bytes(bytes)
    };
    assert_eq!(&elf[..5], b"\x7fELF\x02", "a 64-bit ELF file");
    let (table, size, count) = (word(0x20, 8), word(0x36, 2), word(0x38, 2));
    let (mut low, mut high) = (u64::MAX, 0);
    for i in 0..count {
        let header = (table + i * size) as usize;
        const PT_LOAD: u64 = 1;
        if word(header, 4) == PT_LOAD {
            let (address, memory) = (word(header + 0x10, 8), word(header + 0x28, 8));
            low = low.min(address);
            high = high.max(address + memory);
        }
    }
    high - low
}

/// How one run under a limit ended.
struct Ended {
    /// The exit status; `None` if killed by a signal.
    code: Option<i32>,
    signal: Option<i32>,
    stdout: String,
    stderr: String,
}

fn run_under(crontap: &mut Crontap, limit: u64) -> Ended {
    let command = crontap.command();
    limit_address_space(command, limit);
    let out = command.output().expect("start crontap-run");
    Ended {
        code: out.status.code(),
        signal: out.status.signal(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// A case: its options, and the requests a run that had room for everything sends.
struct Case<'a> {
    name: &'a str,
    options: Vec<String>,
    url: Option<&'a Receiver>,
    /// The requests a complete run sends, as the starts of their targets.
    reports: &'a [&'a str],
}

/// Goes through every limit from the command's own floor up for `case`, and checks each
/// ending; returns the lowest limit at which the command ran.
fn every_limit(case: &Case<'_>) -> u64 {
    let span = binary_span();
    let top = TOP.max((span + 4 * MIB).next_multiple_of(MIB) + 14 * MIB);
    let mut loaded = false;
    let mut first_run = None;
    let mut limit = command_floor();
    while limit <= top {
        let mut crontap = match case.url {
            Some(receiver) => Crontap::with_url(&receiver.url()),
            None => Crontap::new(),
        };
        crontap
            .arg("-q")
            .args(&case.options)
            .args(["--", "sh", "-c", "echo ran; exit 5"]);
        let before = case.url.map_or(0, |r| r.received().len());
        let out = run_under(&mut crontap, limit);
        let sent: Vec<String> = case.url.map_or_else(Vec::new, |r| {
            r.received()[before..]
                .iter()
                .map(|q| q.target.clone())
                .collect()
        });
        let at = format!("{}, limit {} KiB", case.name, limit / 1024);
        let lines: Vec<&str> = out.stderr.lines().collect();
        let names_limit =
            |line: &str| line.contains(&format!("(ulimit -v) is {} KiB", limit / 1024));
        match (out.code, out.signal) {
            // Nothing of crontap-run ran: the kernel could not map the binary, or the
            // dynamic loader its libraries or its thread-local storage.
            (None, Some(libc::SIGSEGV))
                if !loaded && out.stdout.is_empty() && out.stderr.is_empty() =>
            {
                assert!(
                    limit < span + 4 * MIB,
                    "{at}: killed by SIGSEGV above the binary's own size"
                );
            }
            (Some(127), None)
                if !loaded
                    && (out.stderr.contains("error while loading shared libraries")
                        || out.stderr.contains("cannot allocate TLS data structures")) =>
            {
                assert!(
                    limit < span + 4 * MIB,
                    "{at}: the loader failed above the binary's own size"
                );
            }
            (Some(5), None) => {
                loaded = true;
                first_run.get_or_insert(limit);
                assert_eq!(out.stdout, "ran\n", "{at}");
                assert!(lines.len() <= 1, "{at}: {}", out.stderr);
                if let Some(line) = lines.first() {
                    assert!(names_limit(line), "{at}: {line}");
                }
                assert!(sent.len() <= case.reports.len(), "{at}: {sent:?}");
            }
            (Some(125), None) => {
                loaded = true;
                assert!(
                    first_run.is_none(),
                    "{at}: ran at {first_run:?} KiB, refused here"
                );
                assert_eq!(out.stdout, "", "{at}: the command ran");
                assert_eq!(lines.len(), 1, "{at}: {}", out.stderr);
                assert!(names_limit(lines[0]), "{at}: {}", lines[0]);
                assert!(sent.is_empty(), "{at}: {sent:?}");
            }
            _ => panic!(
                "{at}: exit {:?}, signal {:?}: {}",
                out.code, out.signal, out.stderr
            ),
        }
        if limit == top {
            // With room for everything: a complete run.
            assert_eq!(out.code, Some(5), "{at}");
            assert_eq!(out.stderr, "", "{at}");
            assert_eq!(sent.len(), case.reports.len(), "{at}: {sent:?}");
            for (target, report) in sent.iter().zip(case.reports) {
                assert!(target.contains(report), "{at}: {target} for {report}");
            }
        }
        limit += MIB;
    }
    first_run.expect("the command never ran")
}

#[test]
fn under_every_address_space_limit_the_command_runs_or_crontap_run_refuses_in_one_line() {
    let state = tempfile::tempdir().unwrap();
    let state = state.path().display().to_string();
    let crontap = Receiver::start();
    let healthchecks = Receiver::start();
    let both = Receiver::start();
    let metrics = tempfile::tempdir().unwrap();
    let metrics = metrics.path().display().to_string();
    let no_overlap = ["--no-overlap", "--job", "memory", "--state-dir", &state];
    let cases = [
        Case {
            name: "no URL",
            options: vec![],
            url: None,
            reports: &[],
        },
        Case {
            name: "a URL",
            options: vec![],
            url: Some(&crontap),
            reports: &["/fail?"],
        },
        Case {
            name: "Healthchecks",
            options: vec!["--protocol".into(), "healthchecks".into()],
            url: Some(&healthchecks),
            reports: &["/start?", "/5?"],
        },
        Case {
            name: "state",
            options: no_overlap.iter().map(|s| s.to_string()).collect(),
            url: None,
            reports: &[],
        },
        Case {
            name: "every feature: Healthchecks, state, --once-per, held output, metrics, a timeout",
            options: ["--protocol", "healthchecks", "--output", "on-failure"]
                .iter()
                .chain(&no_overlap)
                .chain(&[
                    "--once-per",
                    "1d",
                    "--metrics-dir",
                    &metrics,
                    "--timeout",
                    "1m",
                ])
                .map(|s| s.to_string())
                .collect(),
            url: Some(&both),
            reports: &["/start?", "/5?"],
        },
    ];
    for case in &cases {
        let first_run = every_limit(case);
        // The static release build runs a plain job from about 8 MB, and this one with every
        // feature from about 10 MB; a debug build needs its own size and up to 13 MB more.
        assert!(
            first_run <= binary_span() + 14 * MIB,
            "{}: first ran at {} KiB",
            case.name,
            first_run / 1024
        );
    }
}

/// A copy of the command's output that finds no memory left (`CRONTAP_FAULT=memory-in-copy`:
/// both copies fail as an allocation would, after their first read) goes on passing the
/// output through without allocating: the command, writing more than its pipes hold, is
/// never blocked on them, every byte arrives, and the run exits with its status after one
/// line. (Stopping the copy would leave the command blocked on its full pipe and the run
/// waiting for it, until the timeout stopped it: exit 143.)
#[test]
fn an_output_copy_with_no_memory_left_passes_the_output_on_and_the_run_ends_with_its_status() {
    const BYTES: usize = 4 * 1024 * 1024;
    for output in ["pass", "on-failure"] {
        let out = Crontap::new()
            .env("CRONTAP_FAULT", "memory-in-copy")
            .args(["-q", "--output", output, "--timeout", "30s", "--"])
            .args([
                "sh",
                "-c",
                &format!("head -c {BYTES} /dev/zero; head -c {BYTES} /dev/zero >&2; exit 7"),
            ])
            .run();
        assert_eq!(
            out.code,
            7,
            "--output {output}: {}",
            &out.stderr[out.stderr.len().saturating_sub(300)..]
        );
        assert_eq!(out.stdout.len(), BYTES, "--output {output}: stdout");
        let (zeros, line) = out
            .stderr
            .split_at(out.stderr.rfind('\0').map_or(0, |i| i + 1));
        assert_eq!(zeros.len(), BYTES, "--output {output}: stderr");
        assert_eq!(
            line,
            "crontap-run: out of memory; the rest of the run (its report, history, metrics) is skipped; exit 7\n",
            "--output {output}"
        );
    }
}
