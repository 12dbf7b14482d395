#!/usr/bin/env bash
# Release tests, run by .ci/run after `cargo test`: builds dist/ with packaging/release.sh and
# checks what users get from it: the archives' contents, the .deb's metadata, install.sh
# (over loopback HTTP, file://, wget, shasum, tampered and incomplete releases, other
# platforms), a script without #! run by the static binary, and the static binary in a
# chroot that holds nothing else.
#
#   packaging/test-release.sh [--no-build]    (--no-build: test the dist/ that is there)
#
# Runs as root (chroot), and needs python3, busybox-static, dpkg-deb, curl, wget, shasum
# and shellcheck. Every server it talks to is one it starts on 127.0.0.1. The heartbeat
# URLs carry a secret token, and every run of crontap-run is checked not to print it.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

target=x86_64-unknown-linux-musl
name=crontap-run
top=$name-$target
archive=$top.tar.gz
full_top=$name-full-$target
full_archive=$full_top.tar.gz
max_size=4194304 # 4 MiB

build=1
case "${1:-}" in
    --no-build) build=0 ;;
    "") ;;
    *)
        echo "usage: packaging/test-release.sh [--no-build]" >&2
        exit 2
        ;;
esac

# The heartbeat URL is a secret: nothing crontap-run prints may contain its token, and this
# script never prints it either (receiver logs and outputs shown on failure are redacted).
token=hb-s3cret-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')
redact() {
    local text=$*
    echo "${text//$token/[token]}"
}
fail() {
    redact "FAIL: $*" >&2
    exit 1
}
ok() {
    redact "ok: $*"
}

[ "$(id -u)" -eq 0 ] || fail "the chroot test needs root"
for tool in python3 busybox dpkg-deb curl wget sha256sum shasum shellcheck chroot readelf; do
    command -v "$tool" >/dev/null || fail "$tool is not installed (.ci/run installs what is missing)"
done

# The version, read independently of release.sh (which has its own parser).
version=$(cargo metadata --locked --no-deps --format-version 1 |
    python3 -c 'import json, sys; print(next(p["version"] for p in json.load(sys.stdin)["packages"] if p["name"] == "crontap-run"))')
deb=${name}_${version}_amd64.deb

work=$(mktemp -d "${TMPDIR:-/tmp}/crontap-run-test-release.XXXXXX")
pids=()
cleanup() {
    local pid
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT

# run CMD...: runs CMD with its exit status in $rc, its stdout in $out and its stderr in $err.
run() {
    set +e
    "$@" >"$work/stdout" 2>"$work/stderr"
    rc=$?
    set -e
    out=$(<"$work/stdout")
    err=$(<"$work/stderr")
}
show() {
    redact "$(printf 'exit %s\n--- stdout\n%s\n--- stderr\n%s' "$rc" "$out" "$err")" >&2
}
expect_rc() { # STATUS WHAT: the last run exited with STATUS
    [ "$rc" -eq "$1" ] || {
        show
        fail "$2: exit $rc, expected $1"
    }
}
expect_err() { # PATTERN: the last run's stderr matches the extended regex PATTERN
    grep -Eq -- "$1" <<<"$err" || {
        show
        fail "stderr does not match /$1/"
    }
}

no_token() {
    if grep -qF -- "$token" <<<"$out$err"; then
        show
        fail "$1: the heartbeat token appears in crontap-run's output"
    fi
}

# start_server PORTFILE CMD...: starts CMD in the background and waits until it has written
# PORTFILE.
start_server() {
    local portfile=$1
    shift
    "$@" &
    pids+=("$!")
    for _ in $(seq 100); do
        [ -s "$portfile" ] && return 0
        sleep 0.1
    done
    fail "server did not start: $*"
}

echo "== shellcheck"
shellcheck install.sh .ci/run packaging/*.sh
ok "shellcheck: install.sh, .ci/run, packaging/*.sh"

echo "== packaging/release.sh"
if [ "$build" -eq 1 ]; then
    mkdir -p dist
    touch dist/stale-file
    packaging/release.sh
    [ ! -e dist/stale-file ] || fail "release.sh left an old file in dist/"
    cp dist/SHA256SUMS "$work/SHA256SUMS.first"
    # A second run must work on top of the first and, from the same commit, give the same bytes.
    packaging/release.sh >/dev/null
    cmp -s dist/SHA256SUMS "$work/SHA256SUMS.first" || fail "a second release.sh run gave different archives"
    ok "release.sh cleans dist/, runs twice, and gives identical archives both times"
fi

echo "== dist/"
listing=$(cd dist && ls -A)
expected_listing=$(printf '%s\n' "$archive" "$full_archive" "$deb" install.sh SHA256SUMS | sort)
[ "$listing" = "$expected_listing" ] || fail "dist/ holds:"$'\n'"$listing"$'\n'"expected:"$'\n'"$expected_listing"
sums_names=$(awk '{ print $2 }' dist/SHA256SUMS | sort)
[ "$sums_names" = "$(printf '%s\n' "$archive" "$full_archive" "$deb" install.sh | sort)" ] ||
    fail "SHA256SUMS names:"$'\n'"$sums_names"
(cd dist && sha256sum --check --strict --quiet SHA256SUMS) || fail "SHA256SUMS does not match dist/"
cmp -s dist/install.sh install.sh || fail "dist/install.sh is not the repository's install.sh"
packaging/sizes.sh --check || fail "README's binary size table is out of date"
ok "README's size table matches the release binaries (packaging/sizes.sh --check)"
ok "dist/ holds exactly $archive, $full_archive, $deb, install.sh and SHA256SUMS, which lists the others by bare name and matches them"

echo "== $archive"
tar_listing=$(tar -tzf "dist/$archive" | sort)
expected_tar=$(printf "$top/%s\n" "" LICENSE README.md completions/ completions/_$name \
    completions/$name.bash completions/$name.fish $name man/ man/$name-check.1 man/$name-history.1 man/$name.1 | sort)
[ "$tar_listing" = "$expected_tar" ] || fail "$archive holds:"$'\n'"$tar_listing"
owners=$(tar -tvzf "dist/$archive" | awk '{ print $2 }' | sort -u)
[ "$owners" = "0/0" ] || fail "$archive entries are owned by $owners, not root (0/0)"
mkdir "$work/tar"
tar -xzf "dist/$archive" -C "$work/tar"
t=$work/tar/$top
bin=$t/$name
[ -x "$bin" ] || fail "the archive's $name is not executable"
cmp -s "$t/README.md" README.md || fail "the archive's README.md differs from the repository's"
cmp -s "$t/LICENSE" LICENSE || fail "the archive's LICENSE differs from the repository's"
ok "$archive has the expected entries under $top/, owned by root; README.md and LICENSE as in the repo"

size=$(stat -c %s "$bin")
[ "$size" -le "$max_size" ] || fail "the binary is $size bytes, over $max_size"
ok "binary size: $size bytes (limit $max_size)"
if readelf -l "$bin" | grep -q INTERP; then fail "the binary has a program interpreter: not static"; fi
if readelf -d "$bin" | grep -q NEEDED; then fail "the binary needs shared libraries"; fi
readelf -h "$bin" | grep -q 'Machine:.*X86-64' || fail "the binary is not x86-64"
ok "binary is static x86-64 (no INTERP, no NEEDED)"
[ "$("$bin" --version)" = "$name $version" ] || fail "$bin --version does not report $version"
ok "binary reports $name $version"

# The man pages and completions must be what the generator makes now, not stale or hand-made.
cargo xtask assets "$work/assets" >/dev/null
diff -r "$work/assets/man" "$t/man" || fail "the archive's man pages differ from cargo xtask assets"
diff -r "$work/assets/completions" "$t/completions" || fail "the archive's completions differ from cargo xtask assets"
head -c 200 "$t/man/$name.1" | grep -q '^\.TH' || fail "$name.1 is not a man page"
grep -qF -- '\-\-ping\-timeout' "$t/man/$name.1" || fail "$name.1 does not document --ping-timeout"
ok "man pages and completions are exactly what cargo xtask assets generates"

echo "== $full_archive"
full_listing=$(tar -tzf "dist/$full_archive" | sed "s|^$full_top/|$top/|" | sort)
[ "$full_listing" = "$expected_tar" ] || fail "$full_archive holds:"$'\n'"$full_listing"
mkdir "$work/full"
tar -xzf "dist/$full_archive" -C "$work/full"
full_bin=$work/full/$full_top/$name
diff -r --exclude="$name" "$t" "$work/full/$full_top" || fail "$full_archive's documents differ from $archive's"
if readelf -l "$full_bin" | grep -q INTERP; then fail "the full binary has a program interpreter: not static"; fi
if readelf -d "$full_bin" | grep -q NEEDED; then fail "the full binary needs shared libraries"; fi
[ "$("$full_bin" --version)" = "$name $version" ] || fail "the full binary does not report $version"
# The default binary refuses a server URL for a run with state; the full one takes it (and
# here, with nothing listening on port 1, finds the store unreachable: exit 125).
for url in postgres://127.0.0.1:1/db redis://127.0.0.1:1/0; do
    out=$("$bin" --state-url "$url" --no-overlap -- true 2>&1) && fail "the default binary took $url"
    grep -q "crontap-run-full" <<<"$out" || fail "the default binary's refusal of $url: $out"
    out=$("$full_bin" --state-url "$url" --no-overlap -- true 2>&1) && fail "nothing listens for $url"
    grep -q "is unreachable or failing" <<<"$out" || fail "the full binary with $url: $out"
done
ok "$full_archive: the same documents, a static binary ($(stat -c %s "$full_bin") bytes) with PostgreSQL and Redis stores"

echo "== $deb"
info=$(dpkg-deb -I "dist/$deb")
for member in control md5sums; do
    grep -Eq "^ +[0-9]+ bytes, +[0-9]+ lines +$member" <<<"$info" || fail "dpkg-deb -I shows no $member:"$'\n'"$info"
done
field() { dpkg-deb -f "dist/$deb" "$1"; }
[ "$(field Package)" = "$name" ] || fail "Package: $(field Package)"
[ "$(field Version)" = "$version" ] || fail "Version: $(field Version), Cargo.toml says $version"
[ "$(field Architecture)" = amd64 ] || fail "Architecture: $(field Architecture)"
[ "$(field Section)" = utils ] || fail "Section: $(field Section)"
[ "$(field Priority)" = optional ] || fail "Priority: $(field Priority)"
grep -Eq '^[^<>]+ <[^<>@ ]+@[^<>@ ]+>$' <<<"$(field Maintainer)" || fail "Maintainer: $(field Maintainer)"
description=$(field Description)
synopsis=$(head -1 <<<"$description")
if [ -z "$synopsis" ] || [ "${#synopsis}" -ge 80 ]; then fail "Description synopsis: '$synopsis'"; fi
[ "$(wc -l <<<"$description")" -ge 3 ] || fail "Description has no extended description"
[ -z "$(field Depends)" ] || fail "a static binary needs no Depends: $(field Depends)"
ok "control: Package, Version $version, Architecture amd64, Maintainer, Section utils, Priority optional, Description"

deb_listing=$(dpkg-deb -c "dist/$deb" | awk '{ print $1, $2, $6 }' | sort -k3)
expected_deb=$(
    sort -k3 <<EOF
drwxr-xr-x root/root ./
drwxr-xr-x root/root ./usr/
drwxr-xr-x root/root ./usr/bin/
-rwxr-xr-x root/root ./usr/bin/$name
drwxr-xr-x root/root ./usr/share/
drwxr-xr-x root/root ./usr/share/bash-completion/
drwxr-xr-x root/root ./usr/share/bash-completion/completions/
-rw-r--r-- root/root ./usr/share/bash-completion/completions/$name
drwxr-xr-x root/root ./usr/share/doc/
drwxr-xr-x root/root ./usr/share/doc/$name/
-rw-r--r-- root/root ./usr/share/doc/$name/README.md.gz
-rw-r--r-- root/root ./usr/share/doc/$name/changelog.gz
-rw-r--r-- root/root ./usr/share/doc/$name/copyright
drwxr-xr-x root/root ./usr/share/fish/
drwxr-xr-x root/root ./usr/share/fish/vendor_completions.d/
-rw-r--r-- root/root ./usr/share/fish/vendor_completions.d/$name.fish
drwxr-xr-x root/root ./usr/share/lintian/
drwxr-xr-x root/root ./usr/share/lintian/overrides/
-rw-r--r-- root/root ./usr/share/lintian/overrides/$name
drwxr-xr-x root/root ./usr/share/man/
drwxr-xr-x root/root ./usr/share/man/man1/
-rw-r--r-- root/root ./usr/share/man/man1/$name-check.1.gz
-rw-r--r-- root/root ./usr/share/man/man1/$name-history.1.gz
-rw-r--r-- root/root ./usr/share/man/man1/$name.1.gz
drwxr-xr-x root/root ./usr/share/zsh/
drwxr-xr-x root/root ./usr/share/zsh/vendor-completions/
-rw-r--r-- root/root ./usr/share/zsh/vendor-completions/_$name
EOF
)
[ "$deb_listing" = "$expected_deb" ] || {
    diff <(echo "$expected_deb") <(echo "$deb_listing") >&2 || true
    fail "$deb contents differ from the expected list (- expected, + found)"
}
ok "$deb holds exactly the expected paths, owned by root:root, with the expected modes"

x=$work/deb
dpkg-deb -x "dist/$deb" "$x"
dpkg-deb -e "dist/$deb" "$x/DEBIAN"
cmp -s "$x/usr/bin/$name" "$bin" || fail "the .deb's binary differs from the archive's"
[ "$("$x/usr/bin/$name" --version)" = "$name $version" ] || fail "the .deb's binary does not report $version"
for page in "$name.1" "$name-history.1" "$name-check.1"; do
    gzip -t "$x/usr/share/man/man1/$page.gz" || fail "$page.gz is not valid gzip"
    cmp -s <(zcat "$x/usr/share/man/man1/$page.gz") "$t/man/$page" || fail "the .deb's $page differs from the archive's"
done
cmp -s "$x/usr/share/bash-completion/completions/$name" "$t/completions/$name.bash" || fail ".deb bash completion differs"
cmp -s "$x/usr/share/zsh/vendor-completions/_$name" "$t/completions/_$name" || fail ".deb zsh completion differs"
cmp -s "$x/usr/share/fish/vendor_completions.d/$name.fish" "$t/completions/$name.fish" || fail ".deb fish completion differs"
grep -q '^License: MIT$' "$x/usr/share/doc/$name/copyright" || fail "the copyright file names no MIT license"
grep -q 'Permission is hereby granted' "$x/usr/share/doc/$name/copyright" || fail "the copyright file lacks the license text"
(cd "$x" && md5sum --check --quiet DEBIAN/md5sums) || fail "DEBIAN/md5sums does not match the files"
# Installed-Size is in KiB: at least the files' total, at most that plus a KiB per entry.
installed_size=$(field Installed-Size)
bytes=$(find "$x/usr" -type f -printf '%s\n' | awk '{ s += $1 } END { print s }')
entries=$(find "$x/usr" | wc -l)
if [ "$installed_size" -lt $(((bytes + 1023) / 1024)) ] || [ "$installed_size" -gt $((bytes / 1024 + 2 * entries)) ]; then
    fail "Installed-Size $installed_size KiB does not fit $bytes bytes in $entries entries"
fi
ok "dpkg-deb -x: same binary (runs, reports $version), gzipped man pages and completions as in the archive, copyright, md5sums, Installed-Size $installed_size"

echo "== install.sh"
# Releases served over loopback HTTP: dist/ at the top, and variants in subdirectories.
www=$work/www
mkdir -p "$www"
cp dist/* "$www/"
cp -r dist "$www/v$version"
# A release whose tag says 9.9.9 but whose binary is this one.
cp -r dist "$www/v9.9.9"
# One byte of the archive changed, SHA256SUMS left as it was.
cp -r dist "$www/tampered"
offset=$(($(stat -c %s "$www/tampered/$archive") / 2))
python3 -c 'import sys
path, offset = sys.argv[1], int(sys.argv[2])
data = bytearray(open(path, "rb").read())
data[offset] ^= 0xFF
open(path, "wb").write(data)' "$www/tampered/$archive" "$offset"
! cmp -s "$www/tampered/$archive" "dist/$archive" || fail "the tampered archive is unchanged"
# A well-formed archive whose binary is a script that claims the right version: only the
# checksum can tell it apart.
mkdir -p "$work/evil/$top/man" "$www/evil"
cp "$t/man/"* "$work/evil/$top/man/"
printf '#!/bin/sh\necho "%s %s"\n' "$name" "$version" >"$work/evil/$top/$name"
chmod 0755 "$work/evil/$top/$name"
tar -C "$work/evil" -czf "$www/evil/$archive" "$top"
cp dist/SHA256SUMS "$www/evil/"
# SHA256SUMS without the archive's line.
cp -r dist "$www/noentry"
grep -vF "$archive" dist/SHA256SUMS >"$www/noentry/SHA256SUMS"

# shellcheck disable=SC2094 # http.server's first line of output is where it tells its port
start_server "$work/http.out" python3 -u -m http.server --bind 127.0.0.1 --directory "$www" 0 \
    >"$work/http.out" 2>"$work/http.log"
http_port=$(sed -n 's/.* port \([0-9][0-9]*\) .*/\1/p' "$work/http.out")
[ -n "$http_port" ] || fail "cannot read the HTTP server's port"
base=http://127.0.0.1:$http_port

start_server "$work/ping.port" python3 packaging/test-receiver.py http "$work/ping.port" "$work/ping.log"
ping_url=http://127.0.0.1:$(<"$work/ping.port")/$token
pings() { cat "$work/ping.log" 2>/dev/null || true; }

# install.sh works in its own TMPDIR, which must be empty again after every run.
TMPDIR_INSTALL=$work/tmp
mkdir "$TMPDIR_INSTALL"
# install_sh PREFIX ARGS...: runs install.sh into PREFIX (its default when PREFIX is ""), with
# PATH=$use_path when that is set.
install_sh() {
    local prefix=$1
    shift
    if [ -n "$prefix" ]; then set -- --prefix "$prefix" "$@"; fi
    run env TMPDIR="$TMPDIR_INSTALL" PATH="${use_path:-$PATH}" sh "$repo/install.sh" "$@"
    [ -z "$(ls -A "$TMPDIR_INSTALL")" ] || fail "install.sh left $(ls -A "$TMPDIR_INSTALL") in TMPDIR"
}
expect_installed() { # PREFIX WHAT: a complete install, and a single line saying where
    local prefix=$1 files
    expect_rc 0 "$2"
    [ -z "$err" ] || {
        show
        fail "$2: install.sh wrote to stderr"
    }
    if [ "$(wc -l <<<"$out")" -ne 1 ] || ! grep -qF "installed $name $version as $prefix/bin/$name" <<<"$out"; then
        show
        fail "$2: unexpected output"
    fi
    files=$(cd "$prefix" && find . -mindepth 1 ! -type d | sort)
    [ "$files" = "$(printf '%s\n' "./bin/$name" "./share/man/man1/$name-check.1" "./share/man/man1/$name-history.1" "./share/man/man1/$name.1")" ] ||
        fail "$2: $prefix holds:"$'\n'"$files"
    cmp -s "$prefix/bin/$name" "$bin" || fail "$2: the installed binary is not the released one"
    [ "$(stat -c %a "$prefix/bin/$name")" = 755 ] || fail "$2: the binary's mode is not 755"
    cmp -s "$prefix/share/man/man1/$name.1" "$t/man/$name.1" || fail "$2: the installed man page differs"
}
expect_nothing_installed() { # PREFIX WHAT
    local files
    files=$(find "$1" ! -type d 2>/dev/null || true)
    [ -z "$files" ] || fail "$2: files were installed:"$'\n'"$files"
}

p=$work/p-http
install_sh "$p" --base-url "$base"
expect_installed "$p" "install over http"
: >"$work/ping.log"
run env CRONTAP_HEARTBEAT_URL="$ping_url" "$p/bin/$name" -- sh -c 'echo hello'
expect_rc 0 "installed binary"
no_token "installed binary"
if [ "$out" != hello ] || [ -n "$err" ]; then
    show
    fail "installed binary: output not passed through, or not quiet"
fi
[ "$(pings)" = "/$token"$'\t\t'"$name/$version" ] || fail "installed binary: pings received: $(pings)"
ok "install over http into an empty prefix: one line, binary and man pages, nothing left in TMPDIR; the installed binary runs a job and pings"

# Again, over a binary that is running: a copy in place would fail with "Text file busy".
"$p/bin/$name" -- sleep 30 2>/dev/null &
busy=$!
pids+=("$busy")
sleep 0.2
install_sh "$p" --base-url "$base/"
kill "$busy"
wait "$busy" || true
expect_installed "$p" "second install"
ok "install again, while the installed binary runs: same result (idempotent, replaced by rename)"

p=$work/p-env
CRONTAP_RUN_BASE_URL=$base install_sh "$p"
expect_installed "$p" "CRONTAP_RUN_BASE_URL"
p=$work/p-env-flag
CRONTAP_RUN_BASE_URL=http://127.0.0.1:9/nothing-here install_sh "$p" --base-url "$base"
expect_installed "$p" "--base-url over CRONTAP_RUN_BASE_URL"
ok "CRONTAP_RUN_BASE_URL sets the base URL, and --base-url wins over it"

p=$work/p-file
install_sh "$p" --base-url "file://$repo/dist"
expect_installed "$p" "install from file://"
ok "install from a file:// base URL (curl)"

# Restricted PATHs: exactly the tools install.sh may use, minus the one under test.
tools() { # DIR TOOL...: a directory of links to the named tools
    local dir=$1 tool
    shift
    mkdir -p "$dir"
    for tool in "$@"; do ln -sf "$(command -v "$tool")" "$dir/$tool"; done
}
base_tools=(sh uname id mktemp rm awk tr tar gzip cp chmod mv mkdir basename cat)
tools "$work/tools-wget" "${base_tools[@]}" wget sha256sum
tools "$work/tools-shasum" "${base_tools[@]}" curl shasum
tools "$work/tools-none" "${base_tools[@]}" sha256sum
tools "$work/tools-nosum" "${base_tools[@]}" curl

p=$work/p-wget
use_path=$work/tools-wget install_sh "$p" --base-url "$base"
expect_installed "$p" "install with wget"
p=$work/p-wget-file
use_path=$work/tools-wget install_sh "$p" --base-url "file://$repo/dist"
expect_installed "$p" "file:// with wget"
p=$work/p-shasum
use_path=$work/tools-shasum install_sh "$p" --base-url "$base"
expect_installed "$p" "install with shasum"
ok "install with wget instead of curl (http and file://), and with shasum instead of sha256sum"

p=$work/p-none
use_path=$work/tools-none install_sh "$p" --base-url "$base"
expect_rc 1 "no curl or wget"
expect_err 'curl or wget is needed'
expect_nothing_installed "$p" "no curl or wget"
p=$work/p-nosum
use_path=$work/tools-nosum install_sh "$p" --base-url "$base"
expect_rc 1 "no sha256sum or shasum"
expect_err 'sha256sum or shasum is needed to verify the download; not installing'
expect_nothing_installed "$p" "no sha256sum or shasum"
ok "without curl and wget, or without sha256sum and shasum: refused, nothing installed"

p=$work/p-version
install_sh "$p" --base-url "$base" --version "$version"
expect_installed "$p" "--version $version"
install_sh "$p" --base-url "$base" --version "v$version"
expect_installed "$p" "--version v$version"
p=$work/p-version-wrong
install_sh "$p" --base-url "$base" --version 9.9.9
expect_rc 1 "--version 9.9.9"
expect_err "release v9\.9\.9 holds a binary that reports \"$name $version\"; not installing"
expect_nothing_installed "$p" "--version 9.9.9"
install_sh "$p" --base-url "$base" --version 8.8.8
expect_rc 1 "--version 8.8.8"
expect_err "cannot download $base/v8\.8\.8/SHA256SUMS"
expect_nothing_installed "$p" "--version 8.8.8"
ok "--version V fetches <base-url>/vV (with or without the v), refuses a binary reporting another version, and a missing release"

p=$work/p-tampered
install_sh "$p" --base-url "$base/tampered"
expect_rc 1 "tampered archive"
expect_err "checksum mismatch for $archive .*not installing"
expect_nothing_installed "$p" "tampered archive"
# Over an existing install, which must stay as it was.
p=$work/p-http
before=$(cd "$p" && find . -type f -exec sha256sum {} + | sort)
install_sh "$p" --base-url "$base/tampered"
expect_rc 1 "tampered archive over an install"
[ "$(cd "$p" && find . -type f -exec sha256sum {} + | sort)" = "$before" ] ||
    fail "a refused install changed the existing one"
p=$work/p-evil
install_sh "$p" --base-url "$base/evil"
expect_rc 1 "substituted archive"
expect_err "checksum mismatch for $archive"
expect_nothing_installed "$p" "substituted archive"
p=$work/p-noentry
install_sh "$p" --base-url "file://$www/noentry"
expect_rc 1 "no SHA256SUMS entry"
expect_err "SHA256SUMS has no entry for $archive; not installing"
expect_nothing_installed "$p" "no SHA256SUMS entry"
ok "a tampered archive, a well-formed substitute and a missing SHA256SUMS entry are refused with a clear message; nothing installed or changed"

# Stopped with SIGTERM (to its process group, as a service manager or a closing terminal
# does) while a download hangs: the temporary directory goes, nothing is installed.
mkdir "$work/fake-slow"
printf '#!/bin/sh\nexec sleep 30\n' >"$work/fake-slow/curl"
chmod +x "$work/fake-slow/curl"
p=$work/p-stopped
TMPDIR=$TMPDIR_INSTALL PATH=$work/fake-slow:$PATH setsid sh install.sh --base-url "$base" --prefix "$p" 2>/dev/null &
stopped=$!
pids+=("$stopped")
for _ in $(seq 100); do
    [ -z "$(ls -A "$TMPDIR_INSTALL")" ] || break
    sleep 0.05
done
[ -n "$(ls -A "$TMPDIR_INSTALL")" ] || fail "stopped install: no temporary directory appeared"
[ "$(ps -o pgid= -p "$stopped" | tr -d ' ')" = "$stopped" ] || fail "stopped install: not in a process group of its own"
kill -TERM -- "-$stopped"
set +e
wait "$stopped"
rc=$?
set -e
[ "$rc" -eq 143 ] || fail "stopped install: exit $rc, expected 143"
[ -z "$(ls -A "$TMPDIR_INSTALL")" ] || fail "stopped install: left $(ls -A "$TMPDIR_INSTALL") in TMPDIR"
expect_nothing_installed "$p" "stopped install"
ok "install.sh stopped by SIGTERM during a download: exit 143, temporary directory removed, nothing installed"

# Other platforms, and the default URLs, through stand-in uname, id and curl.
mkdir "$work/fake"
cat >"$work/fake/uname" <<'EOF'
#!/bin/sh
case "$1" in -s) echo Darwin ;; -m) echo arm64 ;; esac
EOF
chmod +x "$work/fake/uname"
p=$work/p-darwin
use_path=$work/fake:$PATH install_sh "$p" --base-url "$base"
expect_rc 1 "Darwin/arm64"
expect_err 'no prebuilt binary for Darwin/arm64'
expect_nothing_installed "$p" "Darwin/arm64"
ok "another platform: \"no prebuilt binary for Darwin/arm64\", nothing installed"

mkdir "$work/fake-curl"
cat >"$work/fake-curl/curl" <<EOF
#!/bin/sh
# Records the URL and writes an empty file where curl would have written the download.
while [ \$# -gt 0 ]; do
    case "\$1" in
        -o) out=\$2; shift 2 ;;
        *://*) echo "\$1" >>"$work/curl.log"; shift ;;
        *) shift ;;
    esac
done
: >"\$out"
EOF
chmod +x "$work/fake-curl/curl"
gh=https://github.com/crontap/crontap-run/releases
use_path=$work/fake-curl:$PATH install_sh "$work/p-default"
expect_rc 1 "default URL"
expect_err "SHA256SUMS has no entry"
use_path=$work/fake-curl:$PATH install_sh "$work/p-default" --version 1.2.3
expect_rc 1 "default URL with --version"
expect_err "SHA256SUMS has no entry"
urls=$(<"$work/curl.log")
[ "$urls" = "$gh/latest/download/SHA256SUMS
$gh/latest/download/$archive
$gh/download/v1.2.3/SHA256SUMS
$gh/download/v1.2.3/$archive" ] || fail "default URLs:"$'\n'"$urls"
ok "default base URLs: $gh/latest/download, and $gh/download/vV with --version"

# Not root: the default prefix is ~/.local.
cat >"$work/fake/id" <<'EOF'
#!/bin/sh
[ "$1" = -u ] && echo 1000
EOF
rm "$work/fake/uname"
chmod +x "$work/fake/id"
mkdir "$work/home"
HOME=$work/home use_path=$work/fake:$PATH install_sh "" --base-url "$base"
expect_installed "$work/home/.local" "default prefix for a user"
ok "without --prefix, a user gets ~/.local"

run sh install.sh --help
expect_rc 0 "--help"
grep -q '^usage: sh install.sh \[--base-url URL\] \[--prefix DIR\] \[--version V\]' <<<"$out" || fail "--help: $out"
run sh install.sh --frobnicate
expect_rc 2 "unknown option"
expect_err 'unknown option: --frobnicate'
ok "-h/--help prints usage; an unknown option is a usage error (exit 2)"

echo "== the static binary starts a script without #! as execvp does"
# musl's execvp does not run such a file with /bin/sh; crontap-run must, as env does.
# shellcheck disable=SC2016 # the script's own $0 and $1
printf 'echo "$0 [$1]"\nexit 3\n' >"$work/rotate.sh"
chmod 0755 "$work/rotate.sh"
run "$bin" -q -- "$work/rotate.sh" "a b"
expect_rc 3 "a script without #!"
[ "$out" = "$work/rotate.sh [a b]" ] || {
    show
    fail "a script without #!: stdout"
}
ok "a script without a #! line runs as /bin/sh <file> <args>, its status kept"

echo "== chroot: the static binary with nothing else"
busybox=$(command -v busybox)
if readelf -l "$busybox" | grep -q INTERP; then fail "$busybox is not static: install busybox-static"; fi
root=$work/chroot
mkdir "$root"
cp "$bin" "$root/$name"
cp "$busybox" "$root/busybox"
[ "$(cd "$root" && find . | sort)" = "$(printf '%s\n' . ./busybox "./$name")" ] || fail "the chroot holds more than the two binaries"
in_chroot() { run env -i "$(command -v chroot)" "$root" "/$name" "$@"; }

in_chroot -- /busybox sh -c 'echo out; echo err >&2'
expect_rc 0 "chroot, no URL"
[ "$out" = out ] || fail "chroot, no URL: stdout '$out'"
# The warning comes first: it is printed before the job starts.
[ "$err" = "crontap-run: warning: no heartbeat URL configured (CRONTAP_HEARTBEAT_URL is not set); the command runs but nothing is reported"$'\n'"err" ] || {
    show
    fail "chroot, no URL: stderr"
}
ok "empty environment, no URL: the job runs, output passes through, one warning"

echo "$ping_url" >"$root/url"
: >"$work/ping.log"
in_chroot --url-file /url -- /busybox sh -c 'echo out; echo err >&2'
expect_rc 0 "chroot, success"
no_token "chroot, success"
if [ "$out" != out ] || [ "$err" != err ]; then
    show
    fail "chroot, success: output"
fi
[ "$(pings)" = "/$token"$'\t\t'"$name/$version" ] || fail "chroot, success: pings received: $(pings)"
ok "chroot, empty environment: success ping received (User-Agent $name/$version), quiet"

in_chroot --url-file /url -- /busybox env
expect_rc 0 "chroot, child environment"
[ "$(cut -d= -f1 <<<"$out" | sort | tr '\n' ' ')" = "CRONTAP_ATTEMPT CRONTAP_RUN_ID " ] || {
    show
    fail "chroot: the child's environment"
}
ok "chroot: the child's environment is CRONTAP_RUN_ID and CRONTAP_ATTEMPT only"

: >"$work/ping.log"
in_chroot --url-file /url -- /busybox sh -c 'echo "password=hunter2 db down" >&2; exit 3'
expect_rc 3 "chroot, failure"
no_token "chroot, failure"
grep -Eq "^/$token/fail\\?msg=[^	]*	exit 3 after [0-9][0-9a-z]*: password=\\[REDACTED\\] db down	" <<<"$(pings)" ||
    fail "chroot, failure: pings received: $(pings)"
ok "chroot: exit 3, fail ping with the scrubbed summary"

: >"$work/ping.log"
in_chroot --url-file /url -- /busybox sh -c 'kill -TERM $$'
expect_rc 143 "chroot, killed"
grep -q "	killed by SIGTERM after " <<<"$(pings)" || fail "chroot, killed: pings received: $(pings)"
: >"$work/ping.log"
in_chroot --url-file /url -- /no-such-command
expect_rc 127 "chroot, not found"
grep -q "	could not start /no-such-command: No such file or directory	" <<<"$(pings)" ||
    fail "chroot, not found: pings received: $(pings)"
no_token "chroot, not found"
ok "chroot: a signal death exits 143, a missing command 127, each with its fail ping"

# https with no certificates anywhere in the chroot: the bundled roots must be used, and the
# client must get as far as sending a TLS ClientHello (a record starting 16 03).
start_server "$work/tls.port" python3 packaging/test-receiver.py raw "$work/tls.port" "$work/tls.log"
tls_port=$(<"$work/tls.port")
echo "https://127.0.0.1:$tls_port/$token" >"$root/url"
in_chroot -v --ping-retries 0 --ping-timeout 5s --url-file /url -- /busybox true
expect_rc 0 "chroot, https"
no_token "chroot, https"
expect_err 'debug: no system root certificates; using the bundled roots'
expect_err "error: ping to 127\\.0\\.0\\.1:$tls_port failed: "
if grep -v 'using the bundled roots' <<<"$err" | grep -qi 'certificate'; then
    show
    fail "chroot, https: a certificate error, where a connection error was expected"
fi
grep -q '^1603' "$work/tls.log" || fail "chroot, https: no TLS ClientHello arrived (got: $(cat "$work/tls.log"))"
ok "chroot, https with no CA certificates: bundled roots used, TLS ClientHello sent; ping error: $(grep -o 'failed: .*' <<<"$err")"

# The other half: TLS itself works in the empty chroot. A test CA in a file named by
# SSL_CERT_FILE (the only variable set) is trusted and the ping arrives over https; without
# it, the same server's certificate is rejected, since the bundled roots do not include it.
pki=$work/pki
mkdir "$pki"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj /CN=crontap-run-test-ca \
    -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign \
    -keyout "$pki/ca.key" -out "$pki/ca.pem" 2>/dev/null
openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=127.0.0.1 \
    -keyout "$pki/server.key" -out "$pki/server.csr" 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' >"$pki/ext"
openssl x509 -req -days 2 -in "$pki/server.csr" -CA "$pki/ca.pem" -CAkey "$pki/ca.key" -CAcreateserial \
    -extfile "$pki/ext" -out "$pki/server.pem" 2>/dev/null
start_server "$work/https.port" python3 packaging/test-receiver.py https "$work/https.port" "$work/https.log" \
    "$pki/server.pem" "$pki/server.key"
echo "https://127.0.0.1:$(<"$work/https.port")/$token" >"$root/url"
cp "$pki/ca.pem" "$root/ca.pem"
run env -i SSL_CERT_FILE=/ca.pem "$(command -v chroot)" "$root" "/$name" --url-file /url -- /busybox true
expect_rc 0 "chroot, https with a trusted test CA"
no_token "chroot, https with a trusted test CA"
[ -z "$err" ] || {
    show
    fail "chroot, https with a trusted test CA: not quiet"
}
[ "$(cat "$work/https.log")" = "/$token"$'\t\t'"$name/$version" ] ||
    fail "chroot, https with a trusted test CA: pings received: $(cat "$work/https.log")"
: >"$work/https.log"
rm "$root/ca.pem"
in_chroot --ping-retries 0 --url-file /url -- /busybox true
expect_rc 0 "chroot, https with an untrusted CA"
no_token "chroot, https with an untrusted CA"
expect_err 'ping to 127\.0\.0\.1:[0-9]+ failed: .*(certificate|UnknownIssuer)'
[ ! -s "$work/https.log" ] || fail "chroot, https with an untrusted CA: a ping was accepted"
ok "chroot, https: a ping arrives when SSL_CERT_FILE names the test CA; without it the server is refused: $(grep -o 'failed: .*' <<<"$err")"

echo "release tests passed"
