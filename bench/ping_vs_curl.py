#!/usr/bin/env python3
"""Wall time and peak RSS of `crontap-run -- true` against `sh -c 'true && curl -fsS "$URL"'`.

Both ping the same loopback receiver, started here, that answers 200 to every GET. The two
commands run alternately so that machine noise hits both alike; the script prints the median
and spread of each and the ratio. Peak RSS is the largest resident set of the process tree
as GNU time reports it (%M, ru_maxrss of the command and the children it waited for), in
MiB; time forks from a small process, so the figure is not inflated by Python's own size.

Usage: bench/ping_vs_curl.py [--runs N] [--bin PATH]
(default: 30 runs, the static release build in target/x86_64-unknown-linux-musl/release)
"""

import argparse
import os
import statistics
import subprocess
import tempfile
import time

import receiver


def measure(argv, env, rss_file):
    start = time.perf_counter()
    proc = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", rss_file, *argv], env=env,
                          stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - start
    if proc.returncode != 0 or proc.stderr:
        raise SystemExit(f"{argv[0]} failed: {proc.stderr.decode(errors='replace')}")
    with open(rss_file) as f:
        return wall, int(f.read().split()[-1]) / 1024.0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--bin", default=os.path.join(os.path.dirname(__file__), "..", "target",
                                                      "x86_64-unknown-linux-musl", "release", "crontap-run"))
    args = parser.parse_args()

    server, url = receiver.start()
    env = {k: v for k, v in os.environ.items() if "PROXY" not in k.upper()}
    env["CRONTAP_HEARTBEAT_URL"] = url
    env["URL"] = url

    cases = {
        "crontap-run -- true": [os.path.abspath(args.bin), "--", "true"],
        "sh -c 'true && curl -fsS \"$URL\"'": ["sh", "-c", 'true && curl -fsS "$URL" >/dev/null'],
    }
    rss_file = tempfile.NamedTemporaryFile(prefix="bench-rss-").name
    for argv in cases.values():  # warm the page cache
        measure(argv, env, rss_file)
    results = {name: [] for name in cases}
    for _ in range(args.runs):
        for name, argv in cases.items():
            results[name].append(measure(argv, env, rss_file))
    os.unlink(rss_file)
    server.shutdown()

    print(f"{args.runs} alternating runs each, loopback receiver")
    print(f"{'command':40} {'median wall':>12} {'min':>8} {'max':>8} {'peak RSS':>10}")
    medians = {}
    for name, samples in results.items():
        walls = sorted(w * 1000 for w, _ in samples)
        rss = max(r for _, r in samples)
        medians[name] = statistics.median(walls)
        print(f"{name:40} {medians[name]:10.2f}ms {walls[0]:6.2f}ms {walls[-1]:6.2f}ms {rss:8.2f}MiB")
    ours, curl = medians.values()
    print(f"wall ratio crontap-run / curl line: {ours / curl:.2f}")
    print(f"binary size: {os.path.getsize(args.bin)} bytes")


if __name__ == "__main__":
    main()
