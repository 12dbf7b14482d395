//! Supervision: signals forwarded to the job's group, timeouts, reaping as subreaper and as
//! PID 1, and the signal state and descriptors the job inherits. Every test waits for a
//! readiness line from the job before acting.

use std::os::unix::process::CommandExt;
use std::time::Duration;

use nix::sys::signal::Signal;

use crate::harness::{Crontap, Receiver, Reply, alive, default_signals, eventually};

/// A job that says it is ready and then waits, with core dumps off for SIGQUIT.
const WAIT: &str = "ulimit -c 0; echo ready; exec sleep 60";

#[test]
fn each_terminating_signal_is_forwarded_and_reported_as_128_plus_s() {
    for signal in [
        Signal::SIGTERM,
        Signal::SIGINT,
        Signal::SIGHUP,
        Signal::SIGQUIT,
        Signal::SIGUSR1,
        Signal::SIGUSR2,
    ] {
        let receiver = Receiver::start();
        let mut run = Crontap::with_url(&receiver.url())
            .args(["--", "sh", "-c", WAIT])
            .start();
        run.wait_for("ready");
        run.signal(signal);
        let out = run.finish();
        assert_eq!(out.code, 128 + signal as i32, "{signal}: {}", out.stderr);
        let msg = receiver.only().msg().unwrap();
        assert!(
            msg.starts_with(&format!("killed by {} after ", signal.as_str())),
            "{msg}"
        );
    }
}

#[test]
fn sigwinch_reaches_the_job() {
    let script = "trap 'echo resized; exit 0' WINCH; echo ready; while :; do sleep 0.05; done";
    let mut run = Crontap::new()
        .args(["-q", "--", "sh", "-c", script])
        .start();
    run.wait_for("ready");
    run.signal(Signal::SIGWINCH);
    run.wait_for("resized");
    assert_eq!(run.finish().code, 0);
}

#[test]
fn the_whole_group_dies_on_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let pids = dir.path().join("pids");
    let script = format!(
        "sleep 999 & echo $! > {p}; sleep 999 & echo $! >> {p}; echo ready; wait",
        p = pids.display()
    );
    let mut run = Crontap::new()
        .args(["-q", "--", "sh", "-c", &script])
        .start();
    run.wait_for("ready");
    run.signal(Signal::SIGTERM);
    let out = run.finish();
    assert_eq!(out.code, 128 + 15);
    for pid in std::fs::read_to_string(&pids).unwrap().lines() {
        let gone = eventually(Duration::from_secs(5), || !alive(pid));
        assert!(gone, "background process {pid} survived");
    }
}

#[test]
fn a_job_counting_sigints_receives_exactly_one() {
    // Like Ctrl-C to a shell's foreground job: SIGINT to crontap-run's whole process group.
    let script = "n=0; trap 'n=$((n+1))' INT; echo ready; while [ $n -eq 0 ]; do sleep 0.05; done; \
                  sleep 0.5; echo \"count=$n\"";
    let mut crontap = Crontap::new();
    crontap.args(["-q", "--timeout", "20s", "--", "sh", "-c", script]);
    crontap.command().process_group(0);
    let mut run = crontap.start();
    run.wait_for("ready");
    nix::sys::signal::killpg(nix::unistd::Pid::from_raw(run.pid()), Signal::SIGINT).unwrap();
    let out = run.finish();
    assert!(out.stdout.ends_with("count=1\n"), "{}", out.stdout);
    assert_eq!(out.code, 0);
}

#[test]
fn timeout_sends_sigterm_and_exits_124() {
    let receiver = Receiver::start();
    let out = Crontap::with_url(&receiver.url())
        .args(["--timeout", "1s"])
        .sh("echo started; sleep 60");
    assert_eq!(out.code, 124);
    let msg = receiver.only().msg().unwrap();
    assert_eq!(msg, "timed out after 1s (sent SIGTERM): started");
}

#[test]
fn timeout_kills_a_job_ignoring_sigterm_and_exits_137() {
    let receiver = Receiver::start();
    let out = Crontap::with_url(&receiver.url())
        .args(["--timeout", "1s", "--kill-after", "1s"])
        .sh("trap '' TERM; echo stubborn; sleep 60");
    assert_eq!(out.code, 137);
    let msg = receiver.only().msg().unwrap();
    assert_eq!(
        msg,
        "timed out after 1s (sent SIGTERM, then SIGKILL after 1s): stubborn"
    );
}

#[test]
fn timeout_from_the_environment() {
    let out = Crontap::new()
        .arg("-q")
        .env("CRONTAP_TIMEOUT", "1s")
        .sh("sleep 60");
    assert_eq!(out.code, 124);
}

#[test]
fn a_stop_request_still_reports_within_the_shutdown_budget() {
    // The receiver never answers; the default ping budget is 30 s.
    let receiver = Receiver::scripted(&[Reply::Hang; 10]);
    let mut run = Crontap::with_url(&receiver.url())
        .args(["--", "sh", "-c", WAIT])
        .start();
    run.wait_for("ready");
    run.signal(Signal::SIGTERM);
    let out = run.finish();
    assert_eq!(out.code, 143);
    assert!(
        out.elapsed < Duration::from_secs(20),
        "took {:?}",
        out.elapsed
    );
    let pings = receiver.received();
    assert!(!pings.is_empty(), "the fail ping was attempted");
    let msg = pings[0].msg().unwrap_or_default();
    assert!(msg.starts_with("killed by SIGTERM after "), "{msg}");
}

#[test]
fn a_job_outliving_a_stop_request_is_killed_after_kill_after() {
    let script = "trap '' TERM; echo ready; sleep 60";
    let mut run = Crontap::new()
        .args(["-q", "--kill-after", "1s", "--", "sh", "-c", script])
        .start();
    run.wait_for("ready");
    run.signal(Signal::SIGTERM);
    assert_eq!(run.finish().code, 128 + 9);
}

/// Without `--kill-after`, SIGKILL follows a stop request after 10 s (DESIGN: the default).
#[test]
fn the_default_kill_after_is_ten_seconds() {
    let script = "trap '' TERM; echo ready; sleep 60";
    let mut run = Crontap::new()
        .args(["-q", "--", "sh", "-c", script])
        .start();
    run.wait_for("ready");
    run.signal(Signal::SIGTERM);
    let out = run.finish();
    assert_eq!(out.code, 128 + 9);
    assert!(
        (Duration::from_secs(9)..Duration::from_secs(40)).contains(&out.elapsed),
        "SIGKILL came after {:?}",
        out.elapsed
    );
}

/// A job that leaves `n` orphans behind, then waits until none of its parent's children is a
/// zombie and prints how many were left.
fn orphans_script(n: u32) -> String {
    format!(
        "i=0; while [ $i -lt {n} ]; do (true &); i=$((i+1)); done; \
         tries=0; while :; do \
           z=0; for s in /proc/[0-9]*/stat; do \
             read -r line < $s 2>/dev/null || continue; \
             rest=${{line##*) }}; set -- $rest; \
             [ \"$1\" = Z ] && [ \"$2\" = \"$PPID\" ] && z=$((z+1)); \
           done; \
           tries=$((tries+1)); \
           if [ $z -eq 0 ] || [ $tries -ge 100 ]; then echo zombies=$z; break; fi; sleep 0.05; \
         done"
    )
}

#[test]
fn orphans_are_adopted_and_reaped_under_the_subreaper() {
    let out = Crontap::new().arg("-q").sh(&orphans_script(100));
    assert_eq!(out.stdout, "zombies=0\n");
    assert_eq!(out.code, 0);
}

#[test]
fn as_pid_1_every_orphan_is_reaped() {
    let out = std::process::Command::new("unshare")
        // A user namespace of its own makes this work for any account, root or not.
        .args([
            "--user",
            "--map-root-user",
            "--pid",
            "--fork",
            "--mount-proc",
            env!("CARGO_BIN_EXE_crontap-run"),
            "-q",
            "--",
            "sh",
            "-c",
        ])
        .arg(format!(
            "[ $PPID = 1 ] || echo not-pid-1; {}",
            orphans_script(50)
        ))
        .env_remove("CRONTAP_HEARTBEAT_URL")
        .output()
        .expect("unshare (util-linux) runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        stdout,
        "zombies=0\n",
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success());
}

/// Ignores SIGPIPE and SIGHUP and blocks SIGUSR2, as a caller of crontap-run might.
fn unusual_signal_state() -> std::io::Result<()> {
    use nix::sys::signal::{SigHandler, SigSet, SigmaskHow, signal, sigprocmask};
    // SAFETY: setting dispositions to SIG_IGN installs no handler code.
    unsafe {
        signal(Signal::SIGPIPE, SigHandler::SigIgn)?;
        signal(Signal::SIGHUP, SigHandler::SigIgn)?;
    }
    let mut blocked = SigSet::empty();
    blocked.add(Signal::SIGUSR2);
    sigprocmask(SigmaskHow::SIG_SETMASK, Some(&blocked), None)?;
    Ok(())
}

#[test]
fn the_job_gets_the_signal_state_crontap_run_inherited() {
    let show = "grep -E '^Sig(Blk|Ign):' /proc/self/status";
    let bit = |s: Signal| 1u64 << (s as i32 - 1);
    // The standard signals (1 to 31) of a `Sig…:` line. Real-time signals are left out:
    // glibc claims two of them for itself before any program code runs.
    let field = |text: &str, name: &str| {
        let line = text.lines().find_map(|l| l.strip_prefix(name)).unwrap();
        u64::from_str_radix(line.trim(), 16).unwrap() & 0x7fff_ffff
    };
    let ignored = |text: &str| field(text, "SigIgn:");
    for unusual in [false, true] {
        // What the job would see started directly, the same way, is the expectation.
        let mut direct = std::process::Command::new("sh");
        direct.args(["-c", show]);
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            direct.pre_exec(default_signals);
        }
        let mut crontap = Crontap::new();
        crontap.args(["-q", "--", "sh", "-c", show]);
        if unusual {
            // SAFETY: only async-signal-safe calls between fork and exec.
            unsafe {
                direct.pre_exec(unusual_signal_state);
                crontap.command().pre_exec(unusual_signal_state);
            }
        }
        let expected = String::from_utf8(direct.output().unwrap().stdout).unwrap();
        let out = crontap.run();
        for name in ["SigBlk:", "SigIgn:"] {
            assert_eq!(
                field(&out.stdout, name),
                field(&expected, name),
                "{name} unusual: {unusual}"
            );
        }
        // Rust's own SIGPIPE setting never leaks into the job.
        assert_eq!(ignored(&out.stdout) & bit(Signal::SIGPIPE) != 0, unusual);
        assert_eq!(ignored(&out.stdout) & bit(Signal::SIGHUP) != 0, unusual);
    }
}

/// `struct sigaction` as the kernel's `rt_sigaction` takes it on x86_64 and arm64. The C
/// library's calls refuse the signals it keeps for itself (32 and 33 for glibc), so the
/// test sets every signal through the system calls.
#[repr(C)]
struct KernelAction {
    handler: libc::sighandler_t,
    flags: libc::c_ulong,
    restorer: usize,
    mask: u64,
}

/// Every signal with its default disposition and unblocked, then `only` ignored and
/// blocked (SIGKILL and SIGSTOP cannot be: the kernel refuses, and the job must show that
/// too).
fn only_this_signal_ignored_and_blocked(only: i32) -> std::io::Result<()> {
    let action = |handler| KernelAction {
        handler,
        flags: 0,
        restorer: 0,
        mask: 0,
    };
    let set = 8usize;
    for sig in 1..=libc::SIGRTMAX() {
        let handler = if sig == only {
            libc::SIG_IGN
        } else {
            libc::SIG_DFL
        };
        // SAFETY: SIG_IGN and SIG_DFL run no code; the kernel copies the action.
        unsafe {
            libc::syscall(
                libc::SYS_rt_sigaction,
                sig,
                &action(handler),
                std::ptr::null_mut::<KernelAction>(),
                set,
            );
        }
    }
    let mask: u64 = 1 << (only - 1);
    // SAFETY: the kernel copies the set.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_rt_sigprocmask,
            libc::SIG_SETMASK,
            &mask,
            std::ptr::null_mut::<u64>(),
            set,
        )
    };
    match rc {
        0 => Ok(()),
        _ => Err(std::io::Error::last_os_error()),
    }
}

/// For every signal from 1 to this system's SIGRTMAX, real-time signals and those the C
/// library keeps for itself included: started with only that signal ignored and blocked,
/// crontap-run starts its job with that signal ignored and blocked, and no other.
#[test]
fn the_job_gets_the_disposition_and_mask_of_every_signal_up_to_sigrtmax() {
    let rtmax = libc::SIGRTMAX();
    assert!((34..=64).contains(&rtmax), "SIGRTMAX is {rtmax}");
    // cat changes no signal state before it shows its own (checked by running it directly;
    // grep, for one, catches SIGSEGV).
    let show = ["cat", "/proc/self/status"];
    let field = |text: &str, name: &str| {
        let line = text.lines().find_map(|l| l.strip_prefix(name));
        let line = line.unwrap_or_else(|| panic!("no {name} in {text:?}"));
        u64::from_str_radix(line.trim(), 16).unwrap()
    };
    for sig in 1..=rtmax {
        let bit = 1u64 << (sig - 1);
        let settable = sig != libc::SIGKILL && sig != libc::SIGSTOP;
        let expected = if settable { bit } else { 0 };
        let mut direct = std::process::Command::new(show[0]);
        direct.args(&show[1..]);
        // SAFETY: only system calls between fork and exec.
        unsafe {
            direct.pre_exec(move || only_this_signal_ignored_and_blocked(sig));
        }
        let direct = String::from_utf8(direct.output().unwrap().stdout).unwrap();
        for name in ["SigBlk:", "SigIgn:"] {
            assert_eq!(field(&direct, name), expected, "signal {sig} {name} direct");
        }
        let mut crontap = Crontap::new();
        crontap.args(["-q", "--"]).args(show);
        // SAFETY: only system calls between fork and exec.
        unsafe {
            crontap
                .command()
                .pre_exec(move || only_this_signal_ignored_and_blocked(sig));
        }
        // Bounded: with SIGCHLD blocked, a crontap-run that kept the caller's mask for
        // itself would never learn that its command ended.
        let mut child = crontap.spawn(std::process::Stdio::piped(), std::process::Stdio::piped());
        let ended = eventually(Duration::from_secs(20), || {
            child.try_wait().unwrap().is_some()
        });
        if !ended {
            let _ = child.kill();
            let _ = child.wait();
            panic!("signal {sig}: crontap-run did not end after its command");
        }
        let out = child.wait_with_output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "signal {sig}: {out:?}");
        for name in ["SigBlk:", "SigIgn:"] {
            assert_eq!(
                field(&stdout, name),
                expected,
                "signal {sig}: {name} of the job (bit {bit:#x})"
            );
        }
    }
}

#[test]
fn the_job_inherits_only_the_descriptors_crontap_run_inherited() {
    // One shell opens an extra descriptor, lists what a child of it gets, then becomes
    // crontap-run, whose job lists what it got: the two lists must match. (One process for
    // both, because tests running in parallel can leak a descriptor into any process this
    // test spawns; `ls` lists its own descriptors, one of them the directory it reads.)
    let script = r#"exec 7</dev/null; ls /proc/self/fd; echo --; exec "$0" -q -- ls /proc/self/fd"#;
    let out = std::process::Command::new("sh")
        .args(["-c", script, env!("CARGO_BIN_EXE_crontap-run")])
        .env_remove("CRONTAP_HEARTBEAT_URL")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let (direct, through) = stdout.split_once("--\n").expect("both lists");
    assert!(direct.lines().any(|fd| fd == "7"), "{direct}");
    assert_eq!(through, direct);
}

/// crontap-run run by hand in a terminal: the job's group gets the foreground, so a job
/// reading the terminal works and Ctrl-C reaches it exactly once while crontap-run lives on.
#[test]
fn in_a_terminal_the_job_reads_it_and_gets_ctrl_c_once() {
    use std::io::{BufRead, BufReader, Write};
    use std::os::fd::AsRawFd;

    let pty = nix::pty::openpty(None, None).unwrap();
    let slave = pty.slave.as_raw_fd();
    let script = "echo ready; read line; echo \"got:$line\"; n=0; trap 'n=$((n+1))' INT; echo armed; \
                  while [ $n -eq 0 ]; do sleep 0.05; done; sleep 0.5; echo \"ints:$n\"";
    let mut crontap = Crontap::new();
    crontap.args(["-q", "--timeout", "20s", "--", "sh", "-c", script]);
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        crontap.command().pre_exec(move || {
            // A new session with the pty as its controlling terminal, as a login shell has.
            nix::unistd::setsid()?;
            for fd in 0..=2 {
                if libc::dup2(slave, fd) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            if libc::ioctl(0, libc::TIOCSCTTY, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = crontap.spawn(std::process::Stdio::null(), std::process::Stdio::null());
    drop(pty.slave);
    // If the hand-over broke, the job and crontap-run would stop on the terminal and the
    // reads below would never end: end the session after a generous limit instead.
    let (_cancel, cancelled) = std::sync::mpsc::channel::<()>();
    let session = nix::unistd::Pid::from_raw(child.id() as i32);
    std::thread::spawn(move || {
        let limit = cancelled.recv_timeout(Duration::from_secs(30));
        if limit == Err(std::sync::mpsc::RecvTimeoutError::Timeout) {
            let _ = nix::sys::signal::killpg(session, Signal::SIGKILL);
        }
    });
    let mut master = std::fs::File::from(pty.master);
    let mut lines = BufReader::new(master.try_clone().unwrap());
    let mut wait_for = |marker: &str| {
        let mut seen = String::new();
        loop {
            let mut line = String::new();
            let n = lines.read_line(&mut line).unwrap_or(0);
            assert!(n > 0, "terminal closed before {marker:?}; saw {seen:?}");
            seen.push_str(&line);
            // The terminal echoes input (`^C`) and ends lines with CR LF.
            if line.trim_end().ends_with(marker) {
                return;
            }
        }
    };
    wait_for("ready");
    master.write_all(b"hello\n").unwrap();
    wait_for("got:hello");
    wait_for("armed");
    master.write_all(&[0x03]).unwrap(); // Ctrl-C
    wait_for("ints:1");
    assert_eq!(child.wait().unwrap().code(), Some(0));
}

#[test]
fn a_stop_request_while_reporting_cuts_the_ping_short() {
    let receiver = Receiver::scripted(&[Reply::Hang; 10]);
    let run = Crontap::with_url(&receiver.url())
        .args(["--", "true"])
        .start();
    // The job is done and the ping is under way once the receiver holds a request.
    assert!(eventually(Duration::from_secs(10), || !receiver
        .received()
        .is_empty()));
    run.signal(Signal::SIGTERM);
    let out = run.finish();
    assert_eq!(out.code, 0, "the job's status is kept");
    assert!(
        out.elapsed < Duration::from_secs(20),
        "took {:?}",
        out.elapsed
    );
    assert!(
        out.stderr
            .contains("SIGTERM arrived and the shutdown budget ran out"),
        "{}",
        out.stderr
    );
}

#[test]
fn orphans_are_adopted_by_crontap_run() {
    // A background process whose parent shell has exited: its parent is now crontap-run.
    let script = "(sleep 30 & echo $! > orphan); while [ ! -s orphan ]; do :; done; \
                  o=$(cat orphan); p=$(awk '/^PPid:/ {print $2}' /proc/$o/status); kill $o; \
                  [ \"$p\" = \"$PPID\" ] && echo adopted || echo \"parent $p, not $PPID\"";
    let dir = tempfile::tempdir().unwrap();
    let mut crontap = Crontap::new();
    crontap.command().current_dir(dir.path());
    let out = crontap.arg("-q").sh(script);
    assert_eq!(out.stdout, "adopted\n");
}

#[test]
fn stopped_members_of_the_group_get_sigcont_and_die() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("stopped");
    let script = format!(
        "sleep 999 & echo $! > {p}; kill -STOP $!; echo ready; wait",
        p = pid_file.display()
    );
    let mut run = Crontap::new()
        .args(["-q", "--", "sh", "-c", &script])
        .start();
    run.wait_for("ready");
    run.signal(Signal::SIGTERM);
    assert_eq!(run.finish().code, 143);
    let pid = std::fs::read_to_string(&pid_file).unwrap();
    assert!(
        eventually(Duration::from_secs(5), || !alive(pid.trim())),
        "the stopped member survived"
    );
}

#[test]
fn sighup_is_forwarded_without_ending_the_job() {
    let script = "trap 'echo reloaded' HUP; echo ready; i=0; while [ $i -lt 30 ]; do sleep 0.05; i=$((i+1)); done; echo finished";
    let mut run = Crontap::new()
        .args(["-q", "--kill-after", "1s", "--", "sh", "-c", script])
        .start();
    run.wait_for("ready");
    run.signal(Signal::SIGHUP);
    run.wait_for("reloaded");
    let out = run.finish();
    assert_eq!(out.code, 0, "a reload request must not lead to SIGKILL");
    assert!(out.stdout.ends_with("finished\n"));
}

#[test]
fn a_stop_request_is_honoured_while_a_reader_is_stuck() {
    use std::os::fd::AsRawFd;
    // crontap-run's stdout goes to a pipe nobody reads; the job fills it.
    let (unread, writer) = std::io::pipe().unwrap();
    let script = "head -c 10000000 /dev/zero";
    let mut child = Crontap::new()
        .args(["-q", "--timeout", "60s", "--", "sh", "-c", script])
        .spawn(writer, std::process::Stdio::null());
    // Ready when the pipe is full: crontap-run is then stuck writing to it.
    let queued = || {
        let mut n: libc::c_int = 0;
        // SAFETY: FIONREAD writes one int.
        unsafe { libc::ioctl(unread.as_raw_fd(), libc::FIONREAD, &mut n) };
        n
    };
    assert!(
        eventually(Duration::from_secs(10), || queued() >= 65536),
        "the pipe never filled"
    );
    let started = std::time::Instant::now();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        Signal::SIGTERM,
    )
    .unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(143));
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "took {:?}",
        started.elapsed()
    );
}
