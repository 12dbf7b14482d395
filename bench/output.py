#!/usr/bin/env python3
"""Peak memory of `--output on-failure` against `--output pass`: a job that prints 1 GB to
stdout and fails, run through crontap-run with each, the output read by `wc -c` (which
checks that every byte came out). Prints, per case, the median wall time, the largest peak
RSS (GNU time's %M) and the bytes that reached stdout; with on-failure, also whether
anything was left in the TMPDIR the held output spilled into (a fresh directory, on the
disk of $TMPDIR or /tmp, not a tmpfs, unless that is where $TMPDIR is).

    cargo build --locked --release --target x86_64-unknown-linux-musl
    python3 bench/output.py [--bin PATH] [--size BYTES] [--runs N]
"""

import argparse
import os
import statistics
import subprocess
import tempfile
import time


def timed(binary, mode, size, tmpdir):
    """One run: (wall seconds, peak RSS in MiB, bytes out, crontap-run's exit status)."""
    job = f"head -c {size} /dev/zero; exit 1"
    rss_file = tempfile.NamedTemporaryFile(prefix="bench-rss-", delete=False).name
    env = {k: v for k, v in os.environ.items() if not k.startswith("CRONTAP_")}
    env["TMPDIR"] = tmpdir
    command = (f"/usr/bin/time -f %M -o {rss_file} {binary} -q --output {mode} "
               f"-- sh -c '{job}' | wc -c")
    start = time.perf_counter()
    done = subprocess.run(["bash", "-o", "pipefail", "-c", command], env=env,
                          capture_output=True, text=True)
    wall = time.perf_counter() - start
    with open(rss_file) as f:
        # GNU time writes "Command exited with non-zero status 1" before the figure.
        rss = int(f.read().split()[-1]) / 1024.0
    os.unlink(rss_file)
    return wall, rss, int(done.stdout.strip() or 0), done.returncode


def main():
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(root, "target"))
    default = os.path.join(target, "x86_64-unknown-linux-musl", "release", "crontap-run")
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", default=default)
    parser.add_argument("--size", type=int, default=1_000_000_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    binary = os.path.abspath(args.bin)
    tmpdir = tempfile.mkdtemp(prefix="crontap-bench-output-")
    print(f"{binary}: a job printing {args.size:,} bytes and exiting 1, {args.runs} "
          f"alternating runs each; TMPDIR={tmpdir}")
    results = {"on-failure": [], "pass": []}
    for _ in range(args.runs):
        for mode in results:
            results[mode].append(timed(binary, mode, args.size, tmpdir))
    for mode, runs in results.items():
        wall = statistics.median(r[0] for r in runs)
        rss = max(r[1] for r in runs)
        out = {r[2] for r in runs}
        statuses = {r[3] for r in runs}
        line = (f"  --output {mode:10} median {wall:6.3f}s  peak RSS {rss:5.2f} MiB  "
                f"bytes out {sorted(out)}  exit {sorted(statuses)}")
        if mode == "on-failure":
            line += f"  left in TMPDIR: {os.listdir(tmpdir) or 'nothing'}"
        print(line)
    os.rmdir(tmpdir)


if __name__ == "__main__":
    main()
