#!/usr/bin/env python3
"""What a plain run costs crontap-run itself, as ratios and as counts that explain them.

Ratios, from alternating pairs (each pair runs both commands back to back, so that machine
noise hits both alike; the figure is the median of the pairs' ratios):
  - a no-op run with no URL, `crontap-run -q -- /bin/true`, against `/bin/true` alone;
  - `crontap-run --version` against `/bin/true`: what starting the binary and parsing the
    command line cost, the part of the first ratio that is not the run's;
  - a no-op run with its success ping, `crontap-run -- /bin/true` with the URL of a loopback
    receiver started here, against `sh -c 'true && curl -fsS "$URL"'`.
Counts, for the no-op run with no URL (the same for every run, whatever the load):
  - system calls in all and before the command is spawned (`strace -f`; "before" counts
    the main thread's calls up to the fork that becomes the command, whatever the command's
    process and crontap-run's other threads do meanwhile);
  - threads started (clone calls with CLONE_THREAD);
  - minor page faults and peak RSS (GNU time's %R and %M);
  - with --callgrind, instructions executed (valgrind's callgrind, crontap-run's process
    only), which are repeatable where wall time is not.

Usage: bench/overhead.py [--bin NAME=PATH ...] [--pairs N] [--callgrind]
(default: musl=target/x86_64-unknown-linux-musl/release/crontap-run and
glibc=target/release/crontap-run, whichever exist; 200 pairs)
"""

import argparse
import os
import re
import shutil
import statistics
import subprocess
import tempfile
import time

import receiver

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
DEFAULT_BINS = {
    "musl": os.path.join(ROOT, "target/x86_64-unknown-linux-musl/release/crontap-run"),
    "glibc": os.path.join(ROOT, "target/release/crontap-run"),
}
TRUE = shutil.which("true") or "/bin/true"


def wall(argv, env):
    start = time.perf_counter()
    proc = subprocess.run(argv, env=env, stdin=subprocess.DEVNULL,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    took = time.perf_counter() - start
    if proc.returncode != 0 or proc.stderr:
        raise SystemExit(f"{argv} failed: {proc.stderr.decode(errors='replace')}")
    return took


def pair_ratio(ours, theirs, env, pairs):
    """Median of ours/theirs over alternating pairs, and each side's median in ms."""
    for _ in range(5):  # warm the page cache and the server
        wall(ours, env)
        wall(theirs, env)
    ratios, a, b = [], [], []
    for i in range(pairs):
        # Alternate which goes first, so that neither always runs on a warmer machine.
        if i % 2:
            tb = wall(theirs, env)
            ta = wall(ours, env)
        else:
            ta = wall(ours, env)
            tb = wall(theirs, env)
        ratios.append(ta / tb)
        a.append(ta)
        b.append(tb)
    return statistics.median(ratios), statistics.median(a) * 1e3, statistics.median(b) * 1e3


def strace_counts(binary, env):
    """System calls in all and before the command's fork, and threads started."""
    with tempfile.TemporaryDirectory(prefix="bench-strace-") as tmp:
        out = os.path.join(tmp, "trace")
        subprocess.run(["strace", "-f", "-qq", "-o", out, binary, "-q", "--", TRUE], env=env,
                       check=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
        lines = open(out).read().splitlines()
    ours = lines[0].split()[0]
    # The command is the process that executes /bin/true; crontap-run's fork of it is the
    # clone in its own pid that returned that pid.
    command = next(line.split()[0] for line in lines
                   if "execve(" in line and f'"{TRUE}"' in line and not line.startswith(ours + " "))
    children, threads = set(), 0
    making_thread = {}  # pid -> whether its clone under way makes a thread
    for line in lines:
        pid, rest = line.split(None, 1)
        resumed = re.match(r"<\.\.\. (clone3?|vfork|fork) resumed>.*= (\d+)$", rest)
        if resumed:
            if not making_thread.get(pid):
                children.add(resumed.group(2))
            continue
        if rest.split("(", 1)[0] not in ("clone", "clone3", "vfork", "fork"):
            continue
        making_thread[pid] = "CLONE_THREAD" in rest
        if "CLONE_THREAD" in rest:
            threads += 1  # counted on the call's first line (it may finish on another)
            continue
        m = re.search(r"= (\d+)$", rest) or re.search(r"parent_tid=\[(\d+)\]", rest)
        if m:
            children.add(m.group(1))
    # Lines are in time order: crontap-run's calls before the one that made the command's
    # process (its fork, clone or vfork, whose result is the command's pid) are those made
    # before the spawn. A call another thread interrupted shows as "<unfinished ...>" first
    # and is counted where it started.
    spawn_at = None
    for i, line in enumerate(lines):
        pid, rest = line.split(None, 1)
        if pid != ours or not rest.rstrip().endswith(f"= {command}"):
            continue
        if rest.startswith("<..."):
            name = rest.split()[1]
            # strace pads the pid with spaces: compare the fields, not the line's start.
            spawn_at = max(j for j in range(i)
                           if lines[j].split(None, 1)[0] == ours
                           and lines[j].split(None, 1)[1].startswith(f"{name}("))
        else:
            spawn_at = i
        break
    # In all: crontap-run's threads too; before the spawn: the main thread's, which spawns
    # (the output threads' calls meanwhile fall before or after it as they are scheduled).
    total = before = 0
    for i, line in enumerate(lines):
        pid, rest = line.split(None, 1)
        if pid in children or rest.startswith(("<...", "+++", "---")):
            continue
        total += 1
        before += pid == ours and i < spawn_at
    return total, before, threads


def time_counts(binary, env):
    with tempfile.NamedTemporaryFile(prefix="bench-time-") as f:
        subprocess.run(["/usr/bin/time", "-f", "%R %M", "-o", f.name, binary, "-q", "--", TRUE],
                       env=env, check=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
        faults, rss = open(f.name).read().split()[-2:]
    return int(faults), int(rss) / 1024.0


def callgrind(binary, env):
    with tempfile.TemporaryDirectory(prefix="bench-callgrind-") as tmp:
        proc = subprocess.run(["valgrind", "--tool=callgrind", "--trace-children=no",
                               f"--callgrind-out-file={tmp}/out", binary, "-q", "--", TRUE],
                              env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True)
        m = re.search(r"Collected : (\d+)", proc.stderr)
        return int(m.group(1)) if m else None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", action="append", default=[], metavar="NAME=PATH")
    parser.add_argument("--pairs", type=int, default=200)
    parser.add_argument("--callgrind", action="store_true")
    args = parser.parse_args()
    bins = dict(b.split("=", 1) for b in args.bin) or {
        name: path for name, path in DEFAULT_BINS.items() if os.path.exists(path)}
    if not bins:
        raise SystemExit("no build found: build with cargo build --release (and/or the musl target)")

    server, url = receiver.start()
    # No proxy, no URL, no crontap-run settings from the caller's environment.
    bare = {k: v for k, v in os.environ.items()
            if "PROXY" not in k.upper() and not k.startswith("CRONTAP_")}
    pinged = dict(bare, CRONTAP_HEARTBEAT_URL=url, URL=url)

    print(f"{args.pairs} alternating pairs each; ratio = median of the pairs' ratios")
    for name, binary in bins.items():
        binary = os.path.abspath(binary)
        r, ours, theirs = pair_ratio([binary, "-q", "--", TRUE], [TRUE], bare, args.pairs)
        print(f"{name}: no-op run, no URL   {ours:6.2f} ms vs /bin/true {theirs:6.2f} ms: {r:.2f}x")
        r, ours, theirs = pair_ratio([binary, "--version"], [TRUE], bare, args.pairs // 2)
        print(f"{name}: start alone (--version) {ours:6.2f} ms vs /bin/true {theirs:6.2f} ms: {r:.2f}x")
        r, ours, theirs = pair_ratio([binary, "--", TRUE],
                                     ["sh", "-c", 'true && curl -fsS "$URL" >/dev/null'],
                                     pinged, args.pairs // 2)
        print(f"{name}: no-op run with ping {ours:6.2f} ms vs true && curl {theirs:6.2f} ms: {r:.2f}x")
        if shutil.which("strace"):
            total, before, threads = strace_counts(binary, bare)
            print(f"{name}: system calls {total} in all, {before} before the spawn; threads started {threads}")
        faults, rss = time_counts(binary, bare)
        tf, trss = time_counts(TRUE, bare)
        print(f"{name}: minor page faults {faults} (/bin/true {tf}); peak RSS {rss:.2f} MiB")
        if args.callgrind and shutil.which("valgrind"):
            print(f"{name}: instructions (callgrind) {callgrind(binary, bare)}")


if __name__ == "__main__":
    main()
