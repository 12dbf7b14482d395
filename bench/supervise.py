#!/usr/bin/env python3
"""Output throughput and signal-forwarding latency of crontap-run.

Throughput: 2 GB from `head -c` through `crontap-run -- …` against the same through `| cat`,
each written on to /dev/null and to a pipe read by `wc -c`; the runs alternate and the
median of each is printed with the ratio, and crontap-run's peak RSS (GNU time's %M).

Latency: a Python child waits for SIGUSR1 and prints CLOCK_MONOTONIC when its handler runs;
the script reads the same clock just before sending the signal, once to crontap-run (which
forwards it) and once straight to a child with no crontap-run in between. The difference of
the medians is the time crontap-run adds.

Usage: bench/supervise.py [--bin PATH] [--runs N] [--signals N]
(default: the static release build, 5 throughput runs, 200 signals)
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


def throughput(binary, runs):
    print(f"2 GB of output, {runs} alternating runs each (median wall time)")
    for sink in ["> /dev/null", "| wc -c > /dev/null"]:
        cases = {
            "crontap-run": f"exec {binary} -q -- head -c {SIZE} /dev/zero {sink}",
            "| cat": f"head -c {SIZE} /dev/zero | cat {sink}",
        }
        results = {name: [] for name in cases}
        for _ in range(runs):
            for name, cmd in cases.items():
                results[name].append(timed(cmd))
        ours = statistics.median(w for w, _ in results["crontap-run"])
        cat = statistics.median(w for w, _ in results["| cat"])
        rss = max(r for _, r in results["crontap-run"])
        print(f"  then {sink:20} crontap-run {ours:6.3f}s   | cat {cat:6.3f}s   ratio {ours / cat:.3f}"
              f"   crontap-run peak RSS {rss:.2f} MiB")


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
    here = os.path.dirname(os.path.abspath(__file__))
    default = os.path.join(here, "..", "target", "x86_64-unknown-linux-musl", "release", "crontap-run")
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", default=default)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--signals", type=int, default=200)
    args = parser.parse_args()
    binary = os.path.abspath(args.bin)
    os.environ.pop("CRONTAP_HEARTBEAT_URL", None)
    throughput(binary, args.runs)
    latency(binary, args.signals)


if __name__ == "__main__":
    main()
