#!/usr/bin/env bash
# Container image test, run by .ci/run after packaging/test-release.sh has built dist/:
# builds the binary-only image from the x86_64 static binary with
# packaging/docker/Dockerfile.dist (FROM scratch: no network needed), then runs it with
# podman: `--version`, and crontap-run wrapping a job inside the image (the binary itself:
# the image holds nothing else) that pings a receiver on the host's loopback
# (`--network host`), once succeeding and once failing to start.
#
#   packaging/test-image.sh
#
# Needs podman and runc (Debian packages podman, runc), busybox-static and python3. Whether
# this machine can run containers at all is asked first, of a probe image holding only a
# static busybox: if podman is missing or cannot build or start that one, the last line
# says so plainly and the script exits 0 without claiming a pass. Once the probe runs,
# every failure of crontap-run's own image fails the script.
set -euo pipefail
cd "$(dirname "$0")/.."

top=crontap-run-x86_64-unknown-linux-musl
archive=dist/$top.tar.gz
tag=localhost/crontap-run-test:ci
probe=localhost/crontap-run-probe:ci
secret=image-test-token-$RANDOM$RANDOM

fail() {
    echo "test-image: FAIL: $*" >&2
    exit 1
}
ok() { echo "ok: $*"; }
cannot() {
    echo "test-image: containers cannot run on this machine ($*); the image was NOT tested"
    exit 0
}

[ -f "$archive" ] || fail "$archive is missing: run packaging/release.sh first"
command -v podman >/dev/null || cannot "podman is not installed"

work=$(mktemp -d)
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    podman rmi -f "$tag" "$probe" >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT

# runc, not Debian's default crun: crun refuses hosts with cgroups in hybrid mode, as
# sandboxes and CI machines often have. The limits are set explicitly because podman's
# defaults (a million open files) can be above the hard limits such a machine allows.
run() {
    podman --runtime runc run --rm --network host \
        --ulimit nofile=1024:1024 --ulimit nproc=1024:1024 "$@"
}

echo "== can this machine run containers?"
busybox=$(command -v busybox || true)
[ -n "$busybox" ] || busybox=/bin/busybox
[ -x "$busybox" ] || fail "no static busybox for the probe image (Debian package busybox-static)"
mkdir -p "$work/probe"
cp "$busybox" "$work/probe/busybox"
printf 'FROM scratch\nCOPY busybox /busybox\nENTRYPOINT ["/busybox"]\n' >"$work/probe/Containerfile"
podman build -q -f "$work/probe/Containerfile" -t "$probe" "$work/probe" >/dev/null 2>"$work/probe.err" ||
    cannot "podman cannot build the smallest image: $(head -n 1 "$work/probe.err")"
run "$probe" true 2>"$work/probe.err" ||
    cannot "podman cannot start the smallest container: $(head -n 1 "$work/probe.err")"
ok "podman builds and runs a FROM scratch image here"

echo "== build the image from $archive"
tar -xzf "$archive" -C "$work"
podman build -q -f packaging/docker/Dockerfile.dist -t "$tag" "$work/$top" >/dev/null ||
    fail "podman build failed"
files=$(podman image inspect --format '{{len .RootFS.Layers}}' "$tag")
[ "$files" = 1 ] || fail "the image has $files layers, expected the binary's one"
ok "image built from the release binary, FROM scratch"

echo "== run it"
version=$(run "$tag" --version 2>"$work/run.err") ||
    fail "crontap-run's image does not run: $(head -n 1 "$work/run.err")"
expected=$(tar -xzf "$archive" -O "$top/crontap-run" >"$work/bin" && chmod +x "$work/bin" &&
    "$work/bin" --version)
[ "$version" = "$expected" ] || fail "--version in the image said '$version', not '$expected'"
ok "--version in the image: $version"

python3 packaging/test-receiver.py http "$work/ping.port" "$work/ping.log" &
pids+=("$!")
for _ in $(seq 100); do
    [ -s "$work/ping.port" ] && break
    sleep 0.1
done
[ -s "$work/ping.port" ] || fail "the receiver did not start"
url="http://127.0.0.1:$(cat "$work/ping.port")/ping/$secret"

# A job that succeeds: the binary itself, the one program in the image.
run -e CRONTAP_HEARTBEAT_URL="$url" "$tag" -- /crontap-run --version >"$work/ok.out" 2>"$work/ok.err" ||
    fail "the wrapped job failed: $(cat "$work/ok.err")"
grep -qx "/ping/$secret	.*" "$work/ping.log" || fail "no success ping: $(cat "$work/ping.log")"
ok "a job in the container pinged the host's receiver"

# A job that cannot start: exit 127 and a failure ping that says why.
: >"$work/ping.log"
status=0
run -e CRONTAP_HEARTBEAT_URL="$url" "$tag" -- /no-such-program >"$work/bad.out" 2>"$work/bad.err" ||
    status=$?
[ "$status" = 127 ] || fail "a job that cannot start exited $status, not 127"
grep -q "^/ping/$secret/fail?.*	could not start" "$work/ping.log" ||
    fail "no failure ping naming the start: $(cat "$work/ping.log")"
ok "a job that cannot start: exit 127 and a failure ping"

if grep -q "$secret" "$work"/*.out "$work"/*.err; then
    fail "the heartbeat token was printed"
fi
ok "the heartbeat token was never printed"
echo "test-image: all passed"
