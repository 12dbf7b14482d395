#!/usr/bin/env python3
"""Wall time of `crontap-run plan --schedule`, for the schedules that cost it the most.

The period is found day by day over 28 years (and on to the next start), every start turned
into an instant only on the days the zone's clock changes; so the costly schedules are those
with many starts a day in a zone with clock changes (`* * * * *` in Europe/Berlin: 1440
instants on each of about 56 change days) and those that fire rarely (the walk goes on past
the horizon to the next start). Each case runs alternately with `crontap-run --version` (the
cost of starting the binary at all), and the median of each is printed, with the difference:
the time `plan` itself takes.

Last, `plan --crontab` of a crontab of 100 lines of cronie's `~ 3 * * *` (each `~` stands for
60 schedules, all measured; the plan measures one schedule text once for all its lines).

Usage: bench/plan.py [--bin PATH] [--runs N]
(default: target/x86_64-unknown-linux-musl/release/crontap-run, 30 runs)
"""

import argparse
import statistics
import subprocess
import tempfile
import time

CASES = [
    ("0 9 * * 1-5", "Europe/Berlin"),
    ("0 0 * * *", "Europe/Berlin"),
    ("*/15 * * * *", "Europe/Berlin"),
    ("* * * * *", "Europe/Berlin"),
    ("* * * * *", "America/New_York"),
    ("0 0 29 2 *", "UTC"),
    ("0 0 */28 2 1", "Europe/Berlin"),
    ("0 0 1 * 1", "Australia/Lord_Howe"),
]


def wall(argv):
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", default="target/x86_64-unknown-linux-musl/release/crontap-run")
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    print(f"{args.bin}, {args.runs} alternating runs each, median wall time")
    print(f"{'schedule':<16} {'zone':<20} {'plan':>9} {'--version':>10} {'plan alone':>11}")
    for schedule, zone in CASES:
        plan = [args.bin, "plan", "--schedule", schedule, "--tz", zone, "--json"]
        base = [args.bin, "--version"]
        timed_plan, timed_base = [], []
        for _ in range(args.runs):
            timed_plan.append(wall(plan))
            timed_base.append(wall(base))
        p, b = statistics.median(timed_plan), statistics.median(timed_base)
        print(f"{schedule:<16} {zone:<20} {p * 1000:>7.2f}ms {b * 1000:>8.2f}ms {(p - b) * 1000:>9.2f}ms")
    with tempfile.NamedTemporaryFile("w", suffix=".crontab") as crontab:
        crontab.write("".join(f"~ 3 * * * /usr/bin/job{i}\n" for i in range(100)))
        crontab.flush()
        argv = [args.bin, "plan", "--crontab", crontab.name, "--tz", "UTC", "--bin", "/usr/local/bin/crontap-run"]
        runs = max(1, args.runs // 10)
        median = statistics.median(wall(argv) for _ in range(runs))
        print(f"plan --crontab of 100 lines '~ 3 * * *' (UTC): {median * 1000:.1f}ms, median of {runs}")


if __name__ == "__main__":
    main()
