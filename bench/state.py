#!/usr/bin/env python3
"""What the state features cost a run: wall time of `crontap-run -- true` with no state,
with --no-overlap, with a fresh --idempotency-key (claimed, recorded, history appended),
and a run skipped because its key already succeeded. Each case runs in blocks (two rounds,
so that a slow spell of the machine hits every case), not alternately: a keyed run's
fsyncs would otherwise slow down the run that follows it. Prints the median of each.

    cargo build --release --target x86_64-unknown-linux-musl
    python3 bench/state.py [path/to/crontap-run] [runs]
"""
import os
import statistics
import subprocess
import sys
import tempfile
import time

binary = sys.argv[1] if len(sys.argv) > 1 else "target/x86_64-unknown-linux-musl/release/crontap-run"
runs = int(sys.argv[2]) if len(sys.argv) > 2 else 40
env = {k: v for k, v in os.environ.items() if not k.startswith("CRONTAP_")}
state = tempfile.mkdtemp(prefix="crontap-bench-")


def timed(args):
    start = time.perf_counter()
    subprocess.run([binary, "-q", *args, "--", "true"], env=env, check=True)
    return (time.perf_counter() - start) * 1000


cases = {
    "no state": lambda i: [],
    "--no-overlap": lambda i: ["--state-dir", state, "--no-overlap"],
    "--idempotency-key (new key: claim, record, history)": lambda i: [
        "--state-dir", state, "--idempotency-key", f"bench-{i}"],
    "skipped: key already succeeded": lambda i: [
        "--state-dir", state, "--idempotency-key", "bench-done"],
}
timed(["--state-dir", state, "--idempotency-key", "bench-done"])
times = {name: [] for name in cases}
for round in range(2):
    for name, args in cases.items():
        for i in range(runs // 2):
            times[name].append(timed(args(round * runs + i)))
print(f"{runs} runs each, state directory on {state}")
for name, values in times.items():
    print(f"  {name:<55} median {statistics.median(values):6.2f} ms")
