#!/usr/bin/env python3
"""Output throughput and signal-forwarding latency of crontap-run.

Throughput: 2 GB from `head -c` through `crontap-run -- …` against the same through `| cat`,
each written on to /dev/null and to a pipe read by `wc -c`, for each build given (by default
the static musl release build and the glibc one `cargo build --release` makes, side by
side); the runs alternate and the median of each is printed with its ratio to `| cat`, and
each build's peak RSS (GNU time's %M).

Latency (first build only): a Python child waits for SIGUSR1 and prints CLOCK_MONOTONIC when its handler runs;
the script reads the same clock just before sending the signal, once to crontap-run (which
forwards it) and once straight to a child with no crontap-run in between. The difference of
the medians is the time crontap-run adds.

Usage: bench/supervise.py [--bin NAME=PATH ...] [--runs N] [--signals N]
(default: musl=target/x86_64-unknown-linux-musl/release/crontap-run and
glibc=target/release/crontap-run, 5 throughput runs, 200 signals)
"""

import argparse
import os
import signal
import statistics
import subprocess
import tempfile
import time

SIZE = 2_000_000_000


def timed(argv):
    rss_file = tempfile.NamedTemporaryFile(prefix="bench-rss-").name
    start = time.perf_counter()
    subprocess.run(["/usr/bin/time", "-f", "%M", "-o", rss_file, "sh", "-c", argv], check=True)
    wall = time.perf_counter() - start
    with open(rss_file) as f:
        rss = int(f.read().split()[-1]) / 1024.0
    os.unlink(rss_file)
    return wall, rss


def throughput(binaries, runs):
    print(f"2 GB of output, {runs} alternating runs each (median wall time; ratio to | cat)")
    for sink in ["> /dev/null", "| wc -c > /dev/null"]:
        cases = {name: f"exec {path} -q -- head -c {SIZE} /dev/zero {sink}"
                 for name, path in binaries.items()}
        cases["| cat"] = f"head -c {SIZE} /dev/zero | cat {sink}"
        results = {name: [] for name in cases}
        for _ in range(runs):
            for name, cmd in cases.items():
                results[name].append(timed(cmd))
        cat = statistics.median(w for w, _ in results["| cat"])
        line = f"  then {sink:20} | cat {cat:6.3f}s"
        for name in binaries:
            wall = statistics.median(w for w, _ in results[name])
            rss = max(r for _, r in results[name])
            line += f"   {name} {wall:6.3f}s ratio {wall / cat:.3f} peak RSS {rss:.2f} MiB"
        print(line)


CHILD = """
import signal, sys, time
def got(*_):
    print(time.monotonic_ns(), flush=True)
    sys.exit(0)
signal.signal(signal.SIGUSR1, got)
print("ready", flush=True)
while True:
    signal.pause()
"""


def latency(binary, count):
    def one(argv, target_is_child):
        p = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
        assert p.stdout.readline().strip() == "ready"
        sent = time.monotonic_ns()
        os.kill(p.pid, signal.SIGUSR1)
        received = int(p.stdout.readline())
        p.wait()
        return (received - sent) / 1000.0

    child = ["python3", "-c", CHILD]
    direct, through = [], []
    for _ in range(count):
        direct.append(one(child, True))
        through.append(one([binary, "-q", "--", *child], False))
    d, t = statistics.median(direct), statistics.median(through)
    print(f"SIGUSR1 to handler, {count} signals each (median): direct {d:.0f} µs, "
          f"through crontap-run {t:.0f} µs; crontap-run adds {t - d:.0f} µs "
          f"(p90 through: {statistics.quantiles(through, n=10)[-1]:.0f} µs)")


def main():
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "target")
    defaults = [f"musl={os.path.join(root, 'x86_64-unknown-linux-musl', 'release', 'crontap-run')}",
                f"glibc={os.path.join(root, 'release', 'crontap-run')}"]
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", action="append", metavar="NAME=PATH",
                        help="a build to measure (repeatable); a bare PATH is named after its file")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--signals", type=int, default=200)
    args = parser.parse_args()
    binaries = {}
    for spec in args.bin or defaults:
        name, _, path = spec.rpartition("=")
        binaries[name or os.path.basename(path)] = os.path.abspath(path)
    os.environ.pop("CRONTAP_HEARTBEAT_URL", None)
    throughput(binaries, args.runs)
    if args.signals:
        latency(next(iter(binaries.values())), args.signals)


if __name__ == "__main__":
    main()
