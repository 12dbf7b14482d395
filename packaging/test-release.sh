#!/usr/bin/env bash
# Release tests, run by .ci/run after `cargo test`: builds dist/ with packaging/release.sh and
# checks what users get from it, for x86_64 and for aarch64: the archives' contents, the
# .debs' metadata, install.sh (over loopback HTTP, file://, wget, shasum, tampered and
# incomplete releases, both architectures through a stand-in uname, other platforms), a
# script without #! run by the static binary, the heartbeat contract of each binary, and
# each static binary in a chroot that holds nothing else.
#
#   packaging/test-release.sh [--no-build]    (--no-build: test the dist/ that is there)
#
# The aarch64 binaries run here (an x86_64 machine) under qemu-aarch64-static. For install.sh
# and the chroot, which start them by path, the script registers qemu-aarch64-static with
# binfmt_misc for its own run (the F flag: the kernel holds the emulator open, so it works
# inside the chroot) and removes that entry when it ends. The aarch64 chroot's job is
# Debian's arm64 busybox-static, fetched with apt-get download; what cannot run here
# (no binfmt_misc, no arm64 busybox) is said plainly, and the last line names it.
#
# Runs as root (chroot, binfmt_misc), and needs python3, busybox-static, dpkg-deb, curl,
# wget, shasum, shellcheck and qemu-user-static. Every server it talks to is one it starts
# on 127.0.0.1. The heartbeat URLs carry a secret token, and every run of crontap-run is
# checked not to print it.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

name=crontap-run
max_size=4194304 # 4 MiB
# Names follow from the architecture (x86_64 or aarch64): the archive TOP/ directories and
# .deb architectures that release.sh makes.
top_of() { echo "$name-$1-unknown-linux-musl"; }
full_top_of() { echo "$name-full-$1-unknown-linux-musl"; }
deb_arch_of() { case "$1" in x86_64) echo amd64 ;; aarch64) echo arm64 ;; esac; }
# readelf -h's Machine: for each.
machine_of() { case "$1" in x86_64) echo "Advanced Micro Devices X86-64" ;; aarch64) echo AArch64 ;; esac; }
# exe ARCH BIN ARGS...: runs BIN, a binary for ARCH, on this x86_64 machine: aarch64 ones
# under qemu's user-mode emulator, explicitly (so this works without binfmt_misc too).
exe() {
    if [ "$1" = aarch64 ]; then
        shift
        qemu-aarch64-static "$@"
    else
        shift
        "$@"
    fi
}
# The x86_64 release, which most tests below use as their subject.
top=$(top_of x86_64)
archive=$top.tar.gz
full_top=$(full_top_of x86_64)
full_archive=$full_top.tar.gz
# The aarch64 one.
a64_top=$(top_of aarch64)
a64_archive=$a64_top.tar.gz
a64_full_archive=$(full_top_of aarch64).tar.gz

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
for tool in python3 busybox dpkg-deb curl wget sha256sum shasum shellcheck chroot readelf qemu-aarch64-static; do
    command -v "$tool" >/dev/null || fail "$tool is not installed (.ci/run installs what is missing)"
done

# The version, read independently of release.sh (which has its own parser).
version=$(cargo metadata --locked --no-deps --format-version 1 |
    python3 -c 'import json, sys; print(next(p["version"] for p in json.load(sys.stdin)["packages"] if p["name"] == "crontap-run"))')
deb=${name}_${version}_amd64.deb
a64_deb=${name}_${version}_arm64.deb

work=$(mktemp -d "${TMPDIR:-/tmp}/crontap-run-test-release.XXXXXX")
pids=()
# The binfmt_misc entry this run registered, if any (see "== binfmt_misc" below).
binfmt=/proc/sys/fs/binfmt_misc
binfmt_entry=""
binfmt_mounted=0
cleanup() {
    local pid
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    if [ -n "$binfmt_entry" ]; then echo -1 >"$binfmt/$binfmt_entry" || true; fi
    # Unmounted only if this run mounted it and nobody has registered anything meanwhile.
    if [ "$binfmt_mounted" -eq 1 ] && [ "$(ls "$binfmt")" = "$(printf 'register\nstatus')" ]; then
        umount "$binfmt" || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT
# What this run could not test, said again in its last line.
not_run=()
not_run() { # WHAT WHY
    echo "NOT RUN: $1: $2"
    not_run+=("$1")
}

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
released=("$archive" "$full_archive" "$deb" "$a64_archive" "$a64_full_archive" "$a64_deb" install.sh)
listing=$(cd dist && ls -A)
expected_listing=$(printf '%s\n' "${released[@]}" SHA256SUMS | sort)
[ "$listing" = "$expected_listing" ] || fail "dist/ holds:"$'\n'"$listing"$'\n'"expected:"$'\n'"$expected_listing"
sums_names=$(awk '{ print $2 }' dist/SHA256SUMS | sort)
[ "$sums_names" = "$(printf '%s\n' "${released[@]}" | sort)" ] ||
    fail "SHA256SUMS names:"$'\n'"$sums_names"
(cd dist && sha256sum --check --strict --quiet SHA256SUMS) || fail "SHA256SUMS does not match dist/"
cmp -s dist/install.sh install.sh || fail "dist/install.sh is not the repository's install.sh"
packaging/sizes.sh --check || fail "bench/README.md's binary size table is out of date"
ok "bench/README.md's size table matches the release binaries (packaging/sizes.sh --check)"
ok "dist/ holds exactly ${released[*]} and SHA256SUMS, which lists the others by bare name and matches them"

echo "== archives"
# The man pages and completions must be what the generator makes now, not stale or hand-made.
cargo xtask assets "$work/assets" >/dev/null
head -c 200 "$work/assets/man/$name.1" | grep -q '^\.TH' || fail "$name.1 is not a man page"
grep -qF -- '\-\-ping\-timeout' "$work/assets/man/$name.1" || fail "$name.1 does not document --ping-timeout"
# Every archive's entries, its TOP/ directory written ./
# (the guides in docs/ are the repository's, whatever pages it has).
guides=$(cd docs && printf '%s\n' *.md)
expected_tar=$({
    printf "./%s\n" "" LICENSE README.md completions/ completions/_$name \
        completions/$name.bash completions/$name.fish $name man/ man/$name-check.1 man/$name-history.1 man/$name-plan.1 man/$name.1 \
        man/$name-heartbeat.1 man/$name-heartbeat-create.1 man/$name-heartbeat-pings.1 man/$name-heartbeat-verify.1 docs/
    (cd docs && printf './docs/%s\n' *.md)
} | sort)
mkdir "$work/tar"
# check_archive TOP: dist/TOP.tar.gz holds exactly the expected entries under TOP/, owned by
# root, with README.md and LICENSE as in the repository and the generated man pages and
# completions; it is unpacked in $work/tar/TOP.
check_archive() {
    local top=$1 listing owners
    local archive=$top.tar.gz t=$work/tar/$top
    listing=$(tar -tzf "dist/$archive" | sed "s|^$top/|./|" | sort)
    [ "$listing" = "$expected_tar" ] || fail "$archive holds:"$'\n'"$listing"
    owners=$(tar -tvzf "dist/$archive" | awk '{ print $2 }' | sort -u)
    [ "$owners" = "0/0" ] || fail "$archive entries are owned by $owners, not root (0/0)"
    tar -xzf "dist/$archive" -C "$work/tar"
    [ -x "$t/$name" ] || fail "$archive's $name is not executable"
    cmp -s "$t/README.md" README.md || fail "$archive's README.md differs from the repository's"
    cmp -s "$t/LICENSE" LICENSE || fail "$archive's LICENSE differs from the repository's"
    diff -r docs "$t/docs" || fail "$archive's docs/ differs from the repository's"
    diff -r "$work/assets/man" "$t/man" || fail "$archive's man pages differ from cargo xtask assets"
    diff -r "$work/assets/completions" "$t/completions" || fail "$archive's completions differ from cargo xtask assets"
}
# check_binary ARCH BIN WHAT: BIN is static, for ARCH, and reports this version.
check_binary() {
    local arch=$1 bin=$2 what=$3
    if readelf -l "$bin" | grep -q INTERP; then fail "$what has a program interpreter: not static"; fi
    if readelf -d "$bin" | grep -q NEEDED; then fail "$what needs shared libraries"; fi
    readelf -h "$bin" | grep -Eq "^ *Machine: +$(machine_of "$arch")\$" || fail "$what is not an $arch binary"
    [ "$(exe "$arch" "$bin" --version)" = "$name $version" ] || fail "$what does not report $name $version"
}

for arch in x86_64 aarch64; do
    default_top=$(top_of "$arch")
    check_archive "$default_top"
    check_archive "$(full_top_of "$arch")"
    ok "$default_top.tar.gz and $(full_top_of "$arch").tar.gz: the expected entries, owned by root; README.md, docs/ and LICENSE as in the repo; man pages and completions exactly what cargo xtask assets generates"

    default_bin=$work/tar/$default_top/$name
    full_bin=$work/tar/$(full_top_of "$arch")/$name
    size=$(stat -c %s "$default_bin")
    [ "$size" -le "$max_size" ] || fail "the $arch binary is $size bytes, over $max_size"
    check_binary "$arch" "$default_bin" "the $arch binary"
    check_binary "$arch" "$full_bin" "the $arch full binary"
    ok "$arch binaries: static (no INTERP, no NEEDED), $(machine_of "$arch"), report $name $version; default $size bytes (limit $max_size), full $(stat -c %s "$full_bin")"
    # The default binary refuses a server URL for a run with state; the full one takes it (and
    # here, with nothing listening on port 1, finds the store unreachable: exit 125).
    for url in postgres://127.0.0.1:1/db redis://127.0.0.1:1/0; do
        out=$(exe "$arch" "$default_bin" --state-url "$url" --no-overlap -- true 2>&1) && fail "the default $arch binary took $url"
        grep -q "crontap-run-full" <<<"$out" || fail "the default $arch binary's refusal of $url: $out"
        out=$(exe "$arch" "$full_bin" --state-url "$url" --no-overlap -- true 2>&1) && fail "nothing listens for $url"
        grep -q "is unreachable or failing" <<<"$out" || fail "the full $arch binary with $url: $out"
    done
    ok "$arch: the default binary refuses postgres:// and redis:// state URLs, naming crontap-run-full; the full one tries them"
done
# The subjects of the tests below.
t=$work/tar/$top
bin=$t/$name
a64_bin=$work/tar/$a64_top/$name

# check_deb ARCH: the .deb for ARCH (amd64 or arm64 in its name and Architecture field).
check_deb() {
    local arch=$1 info member description synopsis deb_listing expected_deb x page installed_size bytes entries
    local deb_arch bin deb
    deb_arch=$(deb_arch_of "$arch")
    deb=${name}_${version}_$deb_arch.deb
    bin=$work/tar/$(top_of "$arch")/$name
    echo "== $deb"
    info=$(dpkg-deb -I "dist/$deb")
    for member in control md5sums; do
        grep -Eq "^ +[0-9]+ bytes, +[0-9]+ lines +$member" <<<"$info" || fail "dpkg-deb -I shows no $member:"$'\n'"$info"
    done
    field() { dpkg-deb -f "dist/$deb" "$1"; }
    [ "$(field Package)" = "$name" ] || fail "Package: $(field Package)"
    [ "$(field Version)" = "$version" ] || fail "Version: $(field Version), Cargo.toml says $version"
    [ "$(field Architecture)" = "$deb_arch" ] || fail "Architecture: $(field Architecture)"
    [ "$(field Section)" = utils ] || fail "Section: $(field Section)"
    [ "$(field Priority)" = optional ] || fail "Priority: $(field Priority)"
    grep -Eq '^[^<>]+ <[^<>@ ]+@[^<>@ ]+>$' <<<"$(field Maintainer)" || fail "Maintainer: $(field Maintainer)"
    description=$(field Description)
    synopsis=$(head -1 <<<"$description")
    if [ -z "$synopsis" ] || [ "${#synopsis}" -ge 80 ]; then fail "Description synopsis: '$synopsis'"; fi
    [ "$(wc -l <<<"$description")" -ge 3 ] || fail "Description has no extended description"
    [ -z "$(field Depends)" ] || fail "a static binary needs no Depends: $(field Depends)"
    ok "control: Package, Version $version, Architecture $deb_arch, Maintainer, Section utils, Priority optional, Description"

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
drwxr-xr-x root/root ./usr/share/doc/$name/docs/
$(cd docs && printf -- "-rw-r--r-- root/root ./usr/share/doc/$name/docs/%s.gz\n" *.md)
drwxr-xr-x root/root ./usr/share/fish/
drwxr-xr-x root/root ./usr/share/fish/vendor_completions.d/
-rw-r--r-- root/root ./usr/share/fish/vendor_completions.d/$name.fish
drwxr-xr-x root/root ./usr/share/lintian/
drwxr-xr-x root/root ./usr/share/lintian/overrides/
-rw-r--r-- root/root ./usr/share/lintian/overrides/$name
drwxr-xr-x root/root ./usr/share/man/
drwxr-xr-x root/root ./usr/share/man/man1/
-rw-r--r-- root/root ./usr/share/man/man1/$name-check.1.gz
-rw-r--r-- root/root ./usr/share/man/man1/$name-heartbeat.1.gz
-rw-r--r-- root/root ./usr/share/man/man1/$name-heartbeat-create.1.gz
-rw-r--r-- root/root ./usr/share/man/man1/$name-heartbeat-pings.1.gz
-rw-r--r-- root/root ./usr/share/man/man1/$name-heartbeat-verify.1.gz
-rw-r--r-- root/root ./usr/share/man/man1/$name-history.1.gz
-rw-r--r-- root/root ./usr/share/man/man1/$name-plan.1.gz
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

    x=$work/deb-$deb_arch
    dpkg-deb -x "dist/$deb" "$x"
    dpkg-deb -e "dist/$deb" "$x/DEBIAN"
    cmp -s "$x/usr/bin/$name" "$bin" || fail "$deb's binary differs from the $arch archive's"
    check_binary "$arch" "$x/usr/bin/$name" "$deb's binary"
    for page in "$name.1" "$name-history.1" "$name-check.1" "$name-plan.1" "$name-heartbeat.1" \
        "$name-heartbeat-create.1" "$name-heartbeat-pings.1" "$name-heartbeat-verify.1"; do
        gzip -t "$x/usr/share/man/man1/$page.gz" || fail "$page.gz is not valid gzip"
        cmp -s <(zcat "$x/usr/share/man/man1/$page.gz") "$t/man/$page" || fail "the .deb's $page differs from the archive's"
    done
    cmp -s "$x/usr/share/bash-completion/completions/$name" "$t/completions/$name.bash" || fail ".deb bash completion differs"
    cmp -s "$x/usr/share/zsh/vendor-completions/_$name" "$t/completions/_$name" || fail ".deb zsh completion differs"
    cmp -s "$x/usr/share/fish/vendor_completions.d/$name.fish" "$t/completions/$name.fish" || fail ".deb fish completion differs"
    grep -q '^License: MIT$' "$x/usr/share/doc/$name/copyright" || fail "the copyright file names no MIT license"
    local guide
    for guide in $guides; do
        cmp -s <(zcat "$x/usr/share/doc/$name/docs/$guide.gz") "docs/$guide" || fail "the .deb's docs/$guide differs from the repository's"
    done
    grep -q 'Permission is hereby granted' "$x/usr/share/doc/$name/copyright" || fail "the copyright file lacks the license text"
    (cd "$x" && md5sum --check --quiet DEBIAN/md5sums) || fail "DEBIAN/md5sums does not match the files"
    # Installed-Size is in KiB: at least the files' total, at most that plus a KiB per entry.
    installed_size=$(field Installed-Size)
    bytes=$(find "$x/usr" -type f -printf '%s\n' | awk '{ s += $1 } END { print s }')
    entries=$(find "$x/usr" | wc -l)
    if [ "$installed_size" -lt $(((bytes + 1023) / 1024)) ] || [ "$installed_size" -gt $((bytes / 1024 + 2 * entries)) ]; then
        fail "Installed-Size $installed_size KiB does not fit $bytes bytes in $entries entries"
    fi
    ok "$deb, dpkg-deb -x: the $arch archive's binary (runs, reports $version), gzipped man pages and completions as in the archive, copyright, md5sums, Installed-Size $installed_size"
}
check_deb x86_64
check_deb aarch64

echo "== binfmt_misc: aarch64 binaries started by path"
# install.sh runs the binary it has downloaded, and chroot starts /crontap-run, by path; on
# this x86_64 machine the kernel can do that with an aarch64 ELF only through a binfmt_misc
# entry naming qemu-aarch64-static. No service registers one here, so this run registers its
# own (qemu-user-static's line, under a name of its own, which cleanup removes). Its F flag
# has the kernel open the emulator now, so that the entry also works inside a chroot that
# holds no emulator.
binfmt_conf=/usr/lib/binfmt.d/qemu-aarch64.conf
binfmt_register() { # sets $why when it cannot
    local line
    line=$(grep -m1 '^:qemu-aarch64:' "$binfmt_conf" 2>/dev/null) || {
        why="no qemu-aarch64 line in $binfmt_conf (qemu-user-static installs it)"
        return 1
    }
    if [ ! -e "$binfmt/register" ]; then
        mount -t binfmt_misc binfmt_misc "$binfmt" 2>"$work/binfmt.err" || {
            why="cannot mount binfmt_misc: $(<"$work/binfmt.err")"
            return 1
        }
        binfmt_mounted=1
    fi
    line=":crontap-run-test-$$:${line#:qemu-aarch64:}"
    case "${line##*:}" in
        *F*) ;;
        *) line=${line}F ;;
    esac
    printf '%s\n' "$line" 2>"$work/binfmt.err" >"$binfmt/register" || {
        why="cannot register with binfmt_misc: $(<"$work/binfmt.err")"
        return 1
    }
    binfmt_entry=crontap-run-test-$$
    [ "$("$a64_bin" --version 2>&1)" = "$name $version" ] || {
        why="the aarch64 binary does not start by path even so"
        return 1
    }
}
if binfmt_register; then
    binfmt_ok=1
    ok "binfmt_misc entry $binfmt_entry: the aarch64 binary starts by path, under $(sed -n 's/^interpreter //p' "$binfmt/$binfmt_entry")"
elif [ "$("$a64_bin" --version 2>/dev/null)" = "$name $version" ]; then
    # A machine whose own entry (systemd-binfmt's, say) already runs it.
    binfmt_ok=1
    ok "the aarch64 binary starts by path through this machine's own binfmt_misc entry (none of this run's: $why)"
else
    binfmt_ok=0
    not_run "install.sh on aarch64, and the aarch64 chroot" "$why"
fi

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
expect_installed() { # PREFIX WHAT [BINARY]: a complete install of BINARY (default: the x86_64
    # release's), and a single line saying where
    local prefix=$1 files released_bin=${3:-$bin}
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
    [ "$files" = "$(printf '%s\n' "./bin/$name" "./share/man/man1/$name-check.1" "./share/man/man1/$name-heartbeat.1" "./share/man/man1/$name-heartbeat-create.1" "./share/man/man1/$name-heartbeat-pings.1" "./share/man/man1/$name-heartbeat-verify.1" "./share/man/man1/$name-history.1" "./share/man/man1/$name-plan.1" "./share/man/man1/$name.1" | sort)" ] ||
        fail "$2: $prefix holds:"$'\n'"$files"
    cmp -s "$prefix/bin/$name" "$released_bin" || fail "$2: the installed binary is not $released_bin"
    [ "$(stat -c %a "$prefix/bin/$name")" = 755 ] || fail "$2: the binary's mode is not 755"
    cmp -s "$prefix/share/man/man1/$name.1" "$t/man/$name.1" || fail "$2: the installed man page differs"
}
expect_nothing_installed() { # PREFIX WHAT
    local files
    files=$(find "$1" ! -type d 2>/dev/null || true)
    [ -z "$files" ] || fail "$2: files were installed:"$'\n'"$files"
}

# installed_runs ARCH PREFIX WHAT: the binary installed in PREFIX, for ARCH, runs a job
# quietly, passes its output through and pings.
installed_runs() {
    : >"$work/ping.log"
    CRONTAP_HEARTBEAT_URL=$ping_url run exe "$1" "$2/bin/$name" -- sh -c 'echo hello'
    expect_rc 0 "$3"
    no_token "$3"
    if [ "$out" != hello ] || [ -n "$err" ]; then
        show
        fail "$3: output not passed through, or not quiet"
    fi
    [ "$(pings)" = "/$token"$'\t\t'"$name/$version" ] || fail "$3: pings received: $(pings)"
}

p=$work/p-http
install_sh "$p" --base-url "$base"
expect_installed "$p" "install over http"
installed_runs x86_64 "$p" "the installed binary"
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

# Other machines and systems, and the default URLs, through stand-in uname, id and curl.
fake_uname() { # DIR OS MACHINE: DIR/uname says OS to -s and MACHINE to -m
    mkdir -p "$1"
    # shellcheck disable=SC2016 # the stand-in's own $1
    printf '#!/bin/sh\ncase "$1" in -s) echo %s ;; -m) echo %s ;; esac\n' "$2" "$3" >"$1/uname"
    chmod +x "$1/uname"
}
# Both names of the machine get the aarch64 release: the installed binary is that one, an
# AArch64 ELF, and it runs a job and pings.
for machine in aarch64 arm64; do
    fake_uname "$work/fake-$machine" Linux "$machine"
    p=$work/p-$machine
    use_path=$work/fake-$machine:$PATH install_sh "$p" --base-url "$base"
    if [ "$binfmt_ok" -eq 0 ]; then
        # install.sh refuses a binary that does not run here, as it should on x86_64.
        expect_rc 1 "Linux/$machine without binfmt_misc"
        expect_err "the downloaded $name does not run on this machine; not installing"
        continue
    fi
    expect_installed "$p" "install on Linux/$machine" "$a64_bin"
    readelf -h "$p/bin/$name" | grep -Eq '^ *Machine: +AArch64$' || fail "Linux/$machine: the installed binary is not AArch64"
    installed_runs aarch64 "$p" "the binary installed on Linux/$machine"
done
if [ "$binfmt_ok" -eq 1 ]; then
    ok "uname -m aarch64 or arm64: $a64_archive installed, its binary an AArch64 ELF, which runs a job and pings"
else
    ok "uname -m aarch64 or arm64: $a64_archive fetched and refused here, where it cannot run (see NOT RUN above)"
fi

# Anything else is refused in one line that names the machine or system.
for platform in Linux/riscv64 Linux/i686 Darwin/arm64; do
    fake_uname "$work/fake-other" "${platform%/*}" "${platform#*/}"
    p=$work/p-other
    use_path=$work/fake-other:$PATH install_sh "$p" --base-url "$base"
    expect_rc 1 "$platform"
    expect_err "^install.sh: error: no prebuilt binary for $platform "
    [ "$(wc -l <<<"$err")" -eq 1 ] || {
        show
        fail "$platform: more than one line on stderr"
    }
    expect_nothing_installed "$p" "$platform"
done
ok "Linux/riscv64, Linux/i686, Darwin/arm64: refused with one line (\"no prebuilt binary for Linux/riscv64 ...\"), exit 1, nothing installed"
mkdir "$work/fake"

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

echo "== the static binaries start a script without #! as execvp does"
# musl's execvp does not run such a file with /bin/sh; crontap-run must, as env does.
# shellcheck disable=SC2016 # the script's own $0 and $1
printf 'echo "$0 [$1]"\nexit 3\n' >"$work/rotate.sh"
chmod 0755 "$work/rotate.sh"
for arch in x86_64 aarch64; do
    run exe "$arch" "$work/tar/$(top_of "$arch")/$name" -q -- "$work/rotate.sh" "a b"
    expect_rc 3 "$arch, a script without #!"
    [ "$out" = "$work/rotate.sh [a b]" ] || {
        show
        fail "$arch, a script without #!: stdout"
    }
done
ok "x86_64 and aarch64: a script without a #! line runs as /bin/sh <file> <args>, its status kept"

# heartbeat_tests WHAT URL_FILE BOX CRONTAP-RUN...: the heartbeat contract of one binary,
# started as CRONTAP-RUN... (in a chroot, or under qemu), URL_FILE naming the receiver's URL
# and BOX a busybox, both as that binary sees them. A success ping; a fail ping with the
# summary scrubbed and the job's exit status; a job killed by a signal (128+S); SIGTERM to
# crontap-run forwarded to the job; a command that does not exist (127). Nothing printed
# holds the token.
heartbeat_tests() {
    local what=$1 url=$2 box=$3 job
    shift 3
    : >"$work/ping.log"
    run "$@" --url-file "$url" -- "$box" sh -c 'echo out; echo err >&2'
    expect_rc 0 "$what, success"
    no_token "$what, success"
    if [ "$out" != out ] || [ "$err" != err ]; then
        show
        fail "$what, success: output"
    fi
    [ "$(pings)" = "/$token"$'\t\t'"$name/$version" ] || fail "$what, success: pings received: $(pings)"

    : >"$work/ping.log"
    run "$@" --url-file "$url" -- "$box" sh -c 'echo "password=hunter2 db down" >&2; exit 3'
    expect_rc 3 "$what, failure"
    no_token "$what, failure"
    grep -Eq "^/$token/fail\\?msg=[^	]*	exit 3 after [0-9][0-9a-z]*: password=\\[REDACTED\\] db down	" <<<"$(pings)" ||
        fail "$what, failure: pings received: $(pings)"

    : >"$work/ping.log"
    # shellcheck disable=SC2016 # the job's own $$
    run "$@" --url-file "$url" -- "$box" sh -c 'kill -TERM $$'
    expect_rc 143 "$what, killed"
    no_token "$what, killed"
    grep -q "	killed by SIGTERM after " <<<"$(pings)" || fail "$what, killed: pings received: $(pings)"

    # SIGTERM to crontap-run (under qemu: to the emulator, which delivers it to the emulated
    # program), once the job has said it runs: forwarded to the job, which dies of it.
    : >"$work/ping.log"
    "$@" --url-file "$url" -- "$box" sh -c "echo ready; exec $box sleep 30" >"$work/bg.out" 2>"$work/bg.err" &
    job=$!
    pids+=("$job")
    for _ in $(seq 300); do
        [ "$(<"$work/bg.out")" != ready ] || break
        sleep 0.1
    done
    [ "$(<"$work/bg.out")" = ready ] || fail "$what, SIGTERM: the job did not say ready within 30 s"
    kill -TERM "$job"
    set +e
    wait "$job"
    rc=$?
    set -e
    out=$(<"$work/bg.out")
    err=$(<"$work/bg.err")
    expect_rc 143 "$what, SIGTERM to crontap-run"
    no_token "$what, SIGTERM to crontap-run"
    grep -q "	killed by SIGTERM after " <<<"$(pings)" || fail "$what, SIGTERM to crontap-run: pings received: $(pings)"

    : >"$work/ping.log"
    run "$@" --url-file "$url" -- /no-such-command
    expect_rc 127 "$what, not found"
    no_token "$what, not found"
    grep -q "	could not start /no-such-command: No such file or directory	" <<<"$(pings)" ||
        fail "$what, not found: pings received: $(pings)"
    ok "$what: success ping (User-Agent $name/$version), quiet; exit 3 with the scrubbed fail ping; a job killed by SIGTERM exits 143, as does one whose crontap-run got SIGTERM, each with its fail ping; a missing command exits 127 with its fail ping"
}

echo "== the x86_64 static binary under every address-space limit"
# DESIGN, "Exit status": under every address-space limit (ulimit -v) in which the command
# alone runs, crontap-run runs it and exits with its status (a report there is no memory for
# is skipped with one line naming the limit), or refuses before starting it with 125 and one
# line naming the limit; never an abort (134) or a segfault of its own. tests/integration/
# memory.rs holds that for the debug build; this is the binary users get. Below the limit at
# which the kernel can map the binary at all, nothing of it runs (the exec is killed with
# SIGSEGV, which the shell running it reports): allowed only below the first limit at which
# it answered, never above.
# as_floor: the lowest limit, in 1 MiB steps down from 16 MiB, at which sh -c 'exit 5' exits 5.
as_floor=16384
while [ "$as_floor" -gt 1024 ] && (ulimit -v $((as_floor - 1024)) && exec sh -c 'exit 5') 2>/dev/null; [ $? -eq 5 ]; do
    as_floor=$((as_floor - 1024))
done
as_state=$work/as-state
as_metrics=$work/as-metrics
mkdir -m 0700 "$as_state" "$as_metrics"
printf '%s\n' "$ping_url" >"$work/as-url"
chmod 0600 "$work/as-url"
as_sweep() { # WHAT REPORTS ARGS...: every limit from as_floor to 16 MiB with crontap-run ARGS
    # (REPORTS: yes where ARGS name a heartbeat URL)
    local what=$1 reports=$2 kib answered=0 lines
    shift 2
    for ((kib = as_floor; kib <= 16384; kib += 1024)); do
        : >"$work/ping.log"
        run sh -c 'ulimit -v "$1" && shift && exec "$@"' sh "$kib" "$bin" -q "$@" -- \
            sh -c 'echo ran; echo "error: password=hunter2 failed" >&2; exit 5'
        no_token "$what, ulimit -v $kib"
        lines=$(grep -c '^crontap-run' <<<"$err" || true)
        case $rc in
        5)
            if [ "$out" != ran ] || [ "$lines" -gt 1 ] ||
                { [ "$lines" -eq 1 ] && ! grep -q 'address-space limit (ulimit -v)' <<<"$err"; }; then
                show
                fail "$what, ulimit -v $kib: the command's status, but not its output and at most one line naming the limit"
            fi
            answered=1
            ;;
        125)
            if [ "$answered" -eq 1 ]; then
                show
                fail "$what, ulimit -v $kib: refused at a limit above one at which the command ran"
            fi
            if [ -n "$out" ] || [ "$lines" -ne 1 ] || ! grep -q 'address-space limit (ulimit -v)' <<<"$err"; then
                show
                fail "$what, ulimit -v $kib: 125 without exactly one line naming the limit, or the command ran"
            fi
            [ ! -s "$work/ping.log" ] || fail "$what, ulimit -v $kib: refused, but a ping was sent"
            ;;
        139)
            # The kernel could not map the binary: nothing of crontap-run ran.
            if [ "$answered" -eq 1 ] || [ -n "$out$err" ]; then
                show
                fail "$what, ulimit -v $kib: a segfault after crontap-run had answered at a lower limit"
            fi
            ;;
        *)
            show
            fail "$what, ulimit -v $kib: exit $rc (never 134 or any other)"
            ;;
        esac
    done
    if [ "$rc" -ne 5 ] || { [ "$reports" = yes ] && [ ! -s "$work/ping.log" ]; }; then
        fail "$what: at 16 MiB the run did not complete with its report"
    fi
}
as_sweep "no URL" no --url-env CRONTAP_NO_SUCH_VARIABLE
as_sweep "a URL" yes --url-file "$work/as-url"
as_sweep "Healthchecks" yes --url-file "$work/as-url" --protocol healthchecks
as_sweep "every feature" yes --url-file "$work/as-url" --protocol healthchecks --output on-failure \
    --state-dir "$as_state" --job as-sweep --no-overlap --once-per 1s --metrics-dir "$as_metrics" --timeout 1m
ok "x86_64 static: from ulimit -v $as_floor KiB (sh alone) to 16 MiB, no URL, a URL, Healthchecks and every feature: the command's status with at most one line naming the limit, or 125 with one line before it ran; a segfault only below every limit at which it answered"

echo "== the aarch64 binary under qemu-aarch64-static"
# Started explicitly under the emulator, with the host's static busybox as the job's shell
# (an x86_64 program, which the emulated binary starts natively).
busybox=$(command -v busybox)
if readelf -l "$busybox" | grep -q INTERP; then fail "$busybox is not static: install busybox-static"; fi
echo "$ping_url" >"$work/url"
heartbeat_tests "aarch64 under qemu-aarch64-static" "$work/url" "$busybox" \
    env -i "$(command -v qemu-aarch64-static)" "$a64_bin"

# Servers for the chroots' https tests: one that only records the first bytes a client sends,
# and one with a certificate from a test CA.
start_server "$work/tls.port" python3 packaging/test-receiver.py raw "$work/tls.port" "$work/tls.log"
tls_port=$(<"$work/tls.port")
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
https_url=https://127.0.0.1:$(<"$work/https.port")/$token

# chroot_tests ARCH BINARY BUSYBOX: BINARY, a static crontap-run for ARCH, in a chroot that
# holds only it and the static BUSYBOX (the job's shell and tools), with an empty
# environment.
chroot_tests() {
    local arch=$1
    root=$work/chroot-$arch
    mkdir "$root"
    cp "$2" "$root/$name"
    cp "$3" "$root/busybox"
    [ "$(cd "$root" && find . | sort)" = "$(printf '%s\n' . ./busybox "./$name")" ] || fail "the chroot holds more than the two binaries"

    in_chroot -- /busybox sh -c 'echo out; echo err >&2'
    expect_rc 0 "$arch chroot, no URL"
    [ "$out" = out ] || fail "$arch chroot, no URL: stdout '$out'"
    # The warning comes first: it is printed before the job starts.
    [ "$err" = "crontap-run: warning: no heartbeat URL configured (CRONTAP_HEARTBEAT_URL is not set); the command runs but nothing is reported"$'\n'"err" ] || {
        show
        fail "$arch chroot, no URL: stderr"
    }
    ok "$arch chroot, empty environment, no URL: the job runs, output passes through, one warning"

    echo "$ping_url" >"$root/url"
    heartbeat_tests "$arch chroot, empty environment" /url /busybox env -i "$(command -v chroot)" "$root" "/$name"

    in_chroot --url-file /url -- /busybox env
    expect_rc 0 "$arch chroot, child environment"
    [ "$(cut -d= -f1 <<<"$out" | sort | tr '\n' ' ')" = "CRONTAP_ATTEMPT CRONTAP_RUN_ID " ] || {
        show
        fail "$arch chroot: the child's environment"
    }
    ok "$arch chroot: the child's environment is CRONTAP_RUN_ID and CRONTAP_ATTEMPT only"

    # https with no certificates anywhere in the chroot: the bundled roots must be used, and
    # the client must get as far as sending a TLS ClientHello (a record starting 16 03).
    : >"$work/tls.log"
    echo "https://127.0.0.1:$tls_port/$token" >"$root/url"
    in_chroot -v --ping-retries 0 --ping-timeout 5s --url-file /url -- /busybox true
    expect_rc 0 "$arch chroot, https"
    no_token "$arch chroot, https"
    expect_err 'debug: no system root certificates; using the bundled roots'
    expect_err "error: ping to 127\\.0\\.0\\.1:$tls_port failed: "
    if grep -v 'using the bundled roots' <<<"$err" | grep -qi 'certificate'; then
        show
        fail "$arch chroot, https: a certificate error, where a connection error was expected"
    fi
    grep -q '^1603' "$work/tls.log" || fail "$arch chroot, https: no TLS ClientHello arrived (got: $(cat "$work/tls.log"))"
    ok "$arch chroot, https with no CA certificates: bundled roots used, TLS ClientHello sent; ping error: $(grep -o 'failed: .*' <<<"$err")"

    # The other half: TLS itself works in the empty chroot. The test CA in a file named by
    # SSL_CERT_FILE (the only variable set) is trusted and the ping arrives over https;
    # without it, the same server's certificate is rejected, since the bundled roots do not
    # include it.
    : >"$work/https.log"
    echo "$https_url" >"$root/url"
    cp "$pki/ca.pem" "$root/ca.pem"
    run env -i SSL_CERT_FILE=/ca.pem "$(command -v chroot)" "$root" "/$name" --url-file /url -- /busybox true
    expect_rc 0 "$arch chroot, https with a trusted test CA"
    no_token "$arch chroot, https with a trusted test CA"
    [ -z "$err" ] || {
        show
        fail "$arch chroot, https with a trusted test CA: not quiet"
    }
    [ "$(cat "$work/https.log")" = "/$token"$'\t\t'"$name/$version" ] ||
        fail "$arch chroot, https with a trusted test CA: pings received: $(cat "$work/https.log")"
    : >"$work/https.log"
    rm "$root/ca.pem"
    in_chroot --ping-retries 0 --url-file /url -- /busybox true
    expect_rc 0 "$arch chroot, https with an untrusted CA"
    no_token "$arch chroot, https with an untrusted CA"
    expect_err 'ping to 127\.0\.0\.1:[0-9]+ failed: .*(certificate|UnknownIssuer)'
    [ ! -s "$work/https.log" ] || fail "$arch chroot, https with an untrusted CA: a ping was accepted"
    ok "$arch chroot, https: a ping arrives when SSL_CERT_FILE names the test CA; without it the server is refused: $(grep -o 'failed: .*' <<<"$err")"
}
in_chroot() { run env -i "$(command -v chroot)" "$root" "/$name" "$@"; }

echo "== x86_64 chroot: the static binary with nothing else"
chroot_tests x86_64 "$bin" "$busybox"

echo "== aarch64 chroot: the static binary with nothing else"
# Its job is Debian's busybox-static for arm64, unpacked from the package (not installed).
# apt offers it once dpkg knows the arm64 architecture, which .ci/run adds.
a64_busybox() { # sets $a64_busybox, or $why
    local debs=$work/arm64-debs
    mkdir -p "$debs"
    if ! dpkg --print-foreign-architectures | grep -qx arm64; then
        why="dpkg has no arm64 architecture, so apt offers no arm64 busybox (dpkg --add-architecture arm64 && apt-get update, as .ci/run does)"
        return 1
    fi
    # As root into a directory only root can read: apt's download user could not write there.
    if ! (cd "$debs" && apt-get download -qq -o APT::Sandbox::User=root busybox-static:arm64) >"$work/apt.log" 2>&1; then
        why="apt-get download busybox-static:arm64 failed: $(tail -1 "$work/apt.log")"
        return 1
    fi
    dpkg-deb -x "$debs"/busybox-static_*_arm64.deb "$debs/x"
    a64_busybox=$debs/x/bin/busybox
    readelf -h "$a64_busybox" | grep -Eq '^ *Machine: +AArch64$' || fail "$a64_busybox is not an arm64 binary"
    if readelf -l "$a64_busybox" | grep -q INTERP; then fail "$a64_busybox is not static"; fi
}
if [ "$binfmt_ok" -eq 0 ]; then
    echo "(not run: see NOT RUN above)"
elif a64_busybox; then
    chroot_tests aarch64 "$a64_bin" "$a64_busybox"
else
    # The aarch64 binary in the chroot all the same, its job the host's x86_64 busybox.
    not_run "the aarch64 chroot with an arm64 busybox as the job (the host's x86_64 busybox stands in)" "$why"
    chroot_tests aarch64 "$a64_bin" "$busybox"
fi

if [ "${#not_run[@]}" -eq 0 ]; then
    echo "release tests passed"
else
    echo "release tests passed; NOT RUN: $(printf '%s; ' "${not_run[@]}" | sed 's/; $//')"
fi
