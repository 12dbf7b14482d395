#!/usr/bin/env python3
"""Wall time and peak RSS of a no-op job with a success report, by heartbeat protocol.

Side by side in one run, `crontap-run -- true` reporting success:

  1. crontap protocol, the binary from before the Healthchecks change (--before),
  2. crontap protocol, the binary after it (--bin),
  3. healthchecks protocol (`--protocol healthchecks`), the binary after it (--bin).

All of them report to the same loopback receiver, started here, which answers 200 "OK" to
every GET and POST (reading a POST's body by its Content-Length). Each case has its own URL
path, so the receiver counts the requests of each case; after every run the script checks
that the run made exactly the requests its protocol must: one `GET <url>` for crontap;
`GET <url>/start?rid=<id>` then `POST <url>/0?rid=<id>`, with the same run id and a body
whose first line is the success summary (`exit 0 after …`), for healthchecks. Any other
request, a missing one or one in the wrong order stops the script with an error.

The cases run alternately (the first case of each round rotates) so that machine noise hits
all alike. The script prints the median, 90th percentile, minimum and maximum wall time of
each, the median and largest peak RSS, and the ratios the change aims at: crontap after /
before (goal: unchanged), healthchecks / crontap after (goal: at most 1.3x), and whether
every run's peak RSS was at most 3.5 MiB. Peak RSS is the largest resident set of the
process tree as GNU time reports it (%M, ru_maxrss of the command and the children it waited
for), in MiB; time forks from a small process, so the figure is not inflated by Python's own
size.

--glibc and --glibc-before add the same three cases for builds linked against glibc
(`cargo build --release`, what `cargo install` gives), in the same alternation. Until the
after binary has --protocol, --no-healthchecks leaves out the healthchecks case(s).

Usage: bench/protocols.py --before PATH [--bin PATH] [--runs N] [--no-healthchecks]
                          [--glibc PATH --glibc-before PATH]
(default: 30 runs, --bin the static release build in target/x86_64-unknown-linux-musl/release)
"""

import argparse
import http.server
import os
import re
import statistics
import subprocess
import tempfile
import threading
import time
from urllib.parse import parse_qsl, urlsplit

import receiver as loopback

RSS_GOAL_MIB = 3.5
HC_RATIO_GOAL = 1.3
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\Z", re.I)


class Request:
    def __init__(self, method, path, query, content_type, body):
        self.method, self.path, self.query = method, path, query
        self.content_type, self.body = content_type, body

    def __str__(self):
        target = self.path + ("?" + self.query if self.query else "")
        return f"{self.method} {target}" + (f" ({len(self.body)}-byte body)" if self.body else "")


class Ok(loopback.Ok):
    """Answers as the shared receiver does, and records each request first."""

    def do_GET(self):
        self.answer(b"")

    def do_POST(self):
        self.answer(self.read_body())

    def read_body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            body = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0], 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass  # trailers
                    return body
                body += self.rfile.read(size)
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def answer(self, body):
        parts = urlsplit(self.path)
        self.server.record(Request(self.command, parts.path, parts.query,
                                   self.headers.get("Content-Type"), body))
        self.reply_ok()


class Receiver(http.server.ThreadingHTTPServer):
    """Keeps the requests of each case (the path segment after /ping/) until taken."""

    daemon_threads = True

    def __init__(self):
        super().__init__(("127.0.0.1", 0), Ok)
        self.lock = threading.Lock()
        self.pending = {}
        self.counts = {}

    def url(self, key):
        return f"http://127.0.0.1:{self.server_address[1]}/ping/{key}"

    def record(self, request):
        segments = request.path.split("/")
        key = segments[2] if len(segments) > 2 and segments[1] == "ping" else "(unknown path)"
        with self.lock:
            self.pending.setdefault(key, []).append(request)
            self.counts[key] = self.counts.get(key, 0) + 1

    def take(self):
        with self.lock:
            pending, self.pending = self.pending, {}
        return pending

    def handle_error(self, request, client_address):
        pass  # clients closing the connection after the response are expected


def check_crontap(base, requests):
    """One `GET <url>`, nothing else."""
    if len(requests) != 1:
        return f"expected 1 request (GET {base}), got {len(requests)}"
    r = requests[0]
    if r.method != "GET" or r.path != base or r.query:
        return f"expected GET {base}, got {r}"
    return None


def check_healthchecks(base, requests):
    """`GET <url>/start?rid=ID`, then `POST <url>/0?rid=ID` with the success summary."""
    if len(requests) != 2:
        return f"expected 2 requests (start, then end), got {len(requests)}"
    start, end = requests
    if start.method != "GET" or start.path != base + "/start":
        return f"expected GET {base}/start?rid=… first, got {start}"
    if end.method != "POST" or end.path != base + "/0":
        return f"expected POST {base}/0?rid=… second, got {end}"
    rids = []
    for r in requests:
        query = parse_qsl(r.query, keep_blank_values=True)
        if len(query) != 1 or query[0][0] != "rid" or not UUID.match(query[0][1]):
            return f"expected a query of exactly rid=<UUID>, got {r}"
        rids.append(query[0][1])
    if rids[0] != rids[1]:
        return f"start and end carry different run ids ({rids[0]}, {rids[1]})"
    if not (end.content_type or "").startswith("text/plain"):
        return f"expected the end's Content-Type text/plain, got {end.content_type!r}"
    summary = end.body.decode("utf-8", errors="replace").split("\n", 1)[0]
    if not summary.startswith("exit 0 after "):
        return f"expected the end's body to start with 'exit 0 after …', got {summary[:80]!r}"
    return None


class Case:
    def __init__(self, key, label, binary, argv, check):
        self.key, self.label, self.binary, self.argv, self.check = key, label, binary, argv, check
        self.samples = []  # (wall seconds, peak RSS MiB)


def measure(case, env, rss_file):
    start = time.perf_counter()
    proc = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", rss_file, *case.argv], env=env,
                          stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - start
    if proc.returncode != 0 or proc.stderr:
        raise SystemExit(f"{case.label}: {' '.join(case.argv)} exited {proc.returncode}: "
                         f"{proc.stderr.decode(errors='replace').strip()}")
    with open(rss_file) as f:
        return wall, int(f.read().split()[-1]) / 1024.0


def run_checked(case, receiver, base_env, rss_file, what):
    env = dict(base_env, CRONTAP_HEARTBEAT_URL=receiver.url(case.key))
    sample = measure(case, env, rss_file)
    got = receiver.take()
    mine = got.pop(case.key, [])
    if got:
        raise SystemExit(f"{case.label}, {what}: requests for other paths arrived: "
                         + "; ".join(f"{key}: {r}" for key, rs in got.items() for r in rs))
    problem = case.check(urlsplit(receiver.url(case.key)).path, mine)
    if problem:
        raise SystemExit(f"{case.label}, {what}: {problem}. Received: "
                         + ("; ".join(map(str, mine)) or "nothing"))
    return sample


def block(flavour, before, after, healthchecks):
    cases = [
        Case(f"{flavour}-crontap-before", f"crontap, before ({flavour})", before,
             [before, "--", "true"], check_crontap),
        Case(f"{flavour}-crontap-after", f"crontap, after ({flavour})", after,
             [after, "--", "true"], check_crontap),
    ]
    if healthchecks:
        cases.append(Case(f"{flavour}-healthchecks", f"healthchecks, after ({flavour})", after,
                          [after, "--protocol", "healthchecks", "--", "true"], check_healthchecks))
    return cases


def executable(path):
    path = os.path.abspath(path)
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        raise argparse.ArgumentTypeError(f"{path} is not an executable file")
    return path


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=30, help="measured runs of each case (default 30)")
    parser.add_argument("--before", type=executable, required=True,
                        help="the static binary from before the change (crontap protocol only)")
    parser.add_argument("--bin", type=executable,
                        default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "target",
                                             "x86_64-unknown-linux-musl", "release", "crontap-run"),
                        help="the static binary after the change (default: the musl release build)")
    parser.add_argument("--glibc", type=executable, help="a glibc build after the change")
    parser.add_argument("--glibc-before", type=executable, help="a glibc build from before the change")
    parser.add_argument("--no-healthchecks", action="store_true",
                        help="leave out the healthchecks case (for an after binary without --protocol)")
    args = parser.parse_args()
    if args.runs < 2:
        parser.error("--runs must be at least 2")
    if (args.glibc is None) != (args.glibc_before is None):
        parser.error("--glibc and --glibc-before go together")

    healthchecks = not args.no_healthchecks
    blocks = [("musl", block("musl", args.before, args.bin, healthchecks))]
    if args.glibc:
        blocks.append(("glibc", block("glibc", args.glibc_before, args.glibc, healthchecks)))
    cases = [case for _, cs in blocks for case in cs]

    receiver = Receiver()
    threading.Thread(target=receiver.serve_forever, daemon=True).start()
    # No proxy, and none of the caller's CRONTAP_* settings (a protocol, state, retries...).
    env = {k: v for k, v in os.environ.items()
           if "PROXY" not in k.upper() and not k.startswith("CRONTAP_")}

    load_before = os.getloadavg()[0]
    rss_file = tempfile.NamedTemporaryFile(prefix="bench-rss-", delete=False).name
    try:
        for case in cases:  # warm the page cache; checked, not counted
            run_checked(case, receiver, env, rss_file, "warm-up run")
        for i in range(args.runs):
            shift = i % len(cases)
            for case in cases[shift:] + cases[:shift]:
                case.samples.append(run_checked(case, receiver, env, rss_file, f"run {i + 1}"))
    finally:
        os.unlink(rss_file)
        receiver.shutdown()
    load_after = os.getloadavg()[0]

    print(f"{args.runs} alternating runs of each case, `crontap-run -- true`, loopback receiver; "
          f"load average {load_before:.2f} before, {load_after:.2f} after")
    print(f"{'case':32} {'median':>9} {'p90':>9} {'min':>9} {'max':>9} {'RSS median':>11} "
          f"{'RSS max':>9} {'requests':>9}")
    stats = {}
    for case in cases:
        walls = sorted(w * 1000 for w, _ in case.samples)
        rss = sorted(r for _, r in case.samples)
        s = stats[case.key] = {
            "median": statistics.median(walls),
            "p90": statistics.quantiles(walls, n=10, method="inclusive")[-1],
            "rss_median": statistics.median(rss),
            "rss_max": rss[-1],
        }
        print(f"{case.label:32} {s['median']:7.2f}ms {s['p90']:7.2f}ms {walls[0]:7.2f}ms "
              f"{walls[-1]:7.2f}ms {s['rss_median']:7.2f}MiB {s['rss_max']:5.2f}MiB "
              f"{receiver.counts.get(case.key, 0):9}")
    print("(requests: all the receiver got for the case, warm-up included; each run checked)")

    for flavour, cs in blocks:
        before, after = stats[cs[0].key], stats[cs[1].key]
        print(f"\n{flavour}:")
        print(f"  crontap after / before: {after['median'] / before['median']:.2f} median, "
              f"{after['p90'] / before['p90']:.2f} p90, "
              f"{after['rss_median'] / before['rss_median']:.2f} RSS median (goal: unchanged)")
        if len(cs) > 2:
            hc = stats[cs[2].key]
            ratio = hc["median"] / after["median"]
            print(f"  healthchecks / crontap after: {ratio:.2f} median, "
                  f"{hc['p90'] / after['p90']:.2f} p90, "
                  f"{hc['rss_median'] / after['rss_median']:.2f} RSS median "
                  f"(goal: at most {HC_RATIO_GOAL}x: {'met' if ratio <= HC_RATIO_GOAL else 'NOT met'})")
        largest = max(stats[c.key]["rss_max"] for c in cs)
        print(f"  peak RSS at most {RSS_GOAL_MIB} MiB in every run: "
              f"{'yes' if largest <= RSS_GOAL_MIB else 'NO'} (largest {largest:.2f} MiB)")
        sizes = {c.binary: os.path.getsize(c.binary) for c in cs}
        for path, size in sizes.items():
            print(f"  {path}: {size} bytes")


if __name__ == "__main__":
    main()
