#!/usr/bin/env python3
"""A fleet starting on the hour: N crontap-runs started at once against one state server,
half of them claiming --once-per keys (each key started twice), the rest --no-overlap jobs.
Prints, per store, claims per second (runs admitted or skipped, over the time from the first
start to the last decision) and the p50 / p99 admission latency (from a run's start to its
command starting, or to its skip).

Starts its own servers on 127.0.0.1: PostgreSQL (initdb and postgres from the Debian
package `postgresql`, as `nobody` when run as root, with max_connections as given) and
Redis (`redis-server`, without persistence). Needs a build with both stores:

    cargo build --release --features postgres,redis
    python3 bench/fleet.py [path/to/crontap-run] [runs] [max_connections]
"""
import glob
import os
import pwd
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

binary = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "target/release/crontap-run")
runs = int(sys.argv[2]) if len(sys.argv) > 2 else 200
max_connections = int(sys.argv[3]) if len(sys.argv) > 3 else 30
env = {k: v for k, v in os.environ.items() if not k.startswith("CRONTAP_")}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, limit=30):
    deadline = time.time() + limit
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    sys.exit(f"nothing listens on port {port}")


def postgres(workdir):
    bins = sorted(glob.glob("/usr/lib/postgresql/*/bin"))
    if not bins:
        sys.exit("PostgreSQL is not installed (apt-get install postgresql)")
    bin_dir = bins[-1]
    data = os.path.join(workdir, "pg")
    demote = None
    if os.geteuid() == 0:
        user = pwd.getpwnam("nobody")
        os.chown(workdir, user.pw_uid, user.pw_gid)

        def demote():
            os.setgid(user.pw_gid)
            os.setuid(user.pw_uid)

    subprocess.run([f"{bin_dir}/initdb", "-D", data, "-U", "bench", "--auth=trust",
                    "--no-sync", "-E", "UTF8", "--locale=C"], check=True,
                   stdout=subprocess.DEVNULL, preexec_fn=demote, cwd=workdir)
    port = free_port()
    server = subprocess.Popen([f"{bin_dir}/postgres", "-D", data, "-p", str(port), "-k", workdir,
                               "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off",
                               "-c", f"max_connections={max_connections}"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              preexec_fn=demote, cwd=workdir)
    wait_port(port)
    return server, f"postgres://bench@127.0.0.1:{port}/postgres?sslmode=disable"


def redis(workdir):
    if not shutil.which("redis-server"):
        sys.exit("redis-server is not installed (apt-get install redis-server)")
    port = free_port()
    server = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1",
                               "--save", "", "--appendonly", "no", "--dir", workdir],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_port(port)
    return server, f"redis://127.0.0.1:{port}/0"


def fleet(url, workdir, tag):
    marks = os.path.join(workdir, f"marks-{tag}")
    os.mkdir(marks)
    procs = []
    first = time.time()
    for i in range(runs):
        if i < runs // 2:
            args = ["--once-per", "1d", "--job", f"{tag}-key-{i // 2}"]
        else:
            args = ["--no-overlap", "--job", f"{tag}-lock-{i}"]
        script = f'date +%s.%N > "{marks}/{i}"; sleep 0.2'
        started = time.time()
        proc = subprocess.Popen([binary, "-q", "--state-url", url, "--state-timeout", "60s",
                                 "--state-dir", os.path.join(workdir, f"dir-{tag}-{i}"), *args,
                                 "--", "sh", "-c", script],
                                env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        procs.append((i, started, proc))
    latencies = []
    last = first
    failed = 0
    for i, started, proc in procs:
        _, err = proc.communicate()
        ended = time.time()
        if proc.returncode != 0:
            failed += 1
            print(f"  run {i} exited {proc.returncode}: {err.decode().strip()}", file=sys.stderr)
            continue
        mark = os.path.join(marks, str(i))
        decided = float(open(mark).read()) if os.path.exists(mark) else ended
        latencies.append(decided - started)
        last = max(last, decided)
    latencies.sort()
    p50 = statistics.median(latencies) * 1000
    p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))] * 1000
    rate = len(latencies) / (last - first)
    print(f"| {tag} | {runs} | {rate:.0f} | {p50:.0f} ms | {p99:.0f} ms | {failed} |")


def main():
    workdir = tempfile.mkdtemp(prefix="crontap-fleet-")
    os.chmod(workdir, 0o777)
    servers = []
    try:
        print(f"| store | runs | claims/s | p50 admission | p99 admission | exit 125 |")
        print("|---|---|---|---|---|---|")
        for tag, start in [("postgres", postgres), ("redis", redis)]:
            server, url = start(workdir)
            servers.append(server)
            fleet(url, workdir, tag)
    finally:
        for server in servers:
            server.terminate()
            server.wait()
        shutil.rmtree(workdir, ignore_errors=True)


main()
