#!/bin/sh
# Installs a prebuilt crontap-run: downloads the release archive for this machine (Linux on
# x86_64 or aarch64) and the release's SHA256SUMS, refuses the archive unless its checksum is
# listed there and matches, then installs <prefix>/bin/crontap-run and its man pages in
# <prefix>/share/man/man1. Running it again replaces them in place.
#
#   sh install.sh [--base-url URL] [--prefix DIR] [--version V]
#
# Each file is copied to a temporary name in its own directory and then renamed over the
# old one, so a crontap-run that cron starts meanwhile is always a whole binary, old or new.
# On any failure the temporary directory and file are removed and nothing is left
# half-written.
set -eu

name=crontap-run
releases=https://github.com/crontap/crontap-run/releases

usage() {
    cat <<EOF
usage: sh install.sh [--base-url URL] [--prefix DIR] [--version V]

Downloads a prebuilt crontap-run for this machine (Linux on x86_64 or aarch64), checks
it against the release's SHA256SUMS and installs it as PREFIX/bin/crontap-run, with its
man pages in PREFIX/share/man/man1.

  --prefix DIR     where to install (default: /usr/local as root, ~/.local otherwise)
  --version V      install release V (default: the latest release)
  --base-url URL   download from URL (https, http or file://) instead of GitHub;
                   env CRONTAP_RUN_BASE_URL does the same. With --version, the
                   files are fetched from URL/vV.
  -h, --help       show this help
EOF
}

die() {
    echo "install.sh: error: $*" >&2
    exit 1
}

usage_error() {
    echo "install.sh: $*" >&2
    usage >&2
    exit 2
}

have() {
    command -v "$1" >/dev/null 2>&1
}

base_url=""
prefix=""
version=""
while [ $# -gt 0 ]; do
    case "$1" in
        --base-url | --prefix | --version)
            [ $# -ge 2 ] || usage_error "$1 needs a value"
            case "$1" in
                --base-url) base_url=$2 ;;
                --prefix) prefix=$2 ;;
                --version) version=$2 ;;
            esac
            shift 2
            ;;
        --base-url=*) base_url=${1#*=} && shift ;;
        --prefix=*) prefix=${1#*=} && shift ;;
        --version=*) version=${1#*=} && shift ;;
        -h | --help)
            usage
            exit 0
            ;;
        *) usage_error "unknown option: $1" ;;
    esac
done

# Release tags are v<version>; accept the version with or without its "v".
version=${version#v}
case "$version" in
    *[!0-9A-Za-z.+~-]*) usage_error "not a version: $version" ;;
esac

base_url=${base_url:-${CRONTAP_RUN_BASE_URL:-}}
if [ -n "$base_url" ]; then
    base_url=${base_url%/}
    if [ -n "$version" ]; then base_url=$base_url/v$version; fi
elif [ -n "$version" ]; then
    base_url=$releases/download/v$version
else
    base_url=$releases/latest/download
fi

# uname -m says x86_64 and aarch64 on Linux; amd64 and arm64 are the same machines under
# the names Debian and the BSDs use, which some containers and stand-ins report.
os=$(uname -s)
arch=$(uname -m)
case "$os/$arch" in
    Linux/x86_64 | Linux/amd64) target=x86_64-unknown-linux-musl ;;
    Linux/aarch64 | Linux/arm64) target=aarch64-unknown-linux-musl ;;
    *) die "no prebuilt binary for $os/$arch (there are for Linux on x86_64 and aarch64); build crontap-run from source with cargo instead (see README.md)" ;;
esac
archive=$name-$target.tar.gz

if [ -z "$prefix" ]; then
    if [ "$(id -u)" -eq 0 ]; then prefix=/usr/local; else prefix=${HOME:?HOME is not set}/.local; fi
fi
case "$prefix" in
    /*) ;;
    *) prefix=$(pwd)/$prefix ;;
esac
bindir=$prefix/bin
mandir=$prefix/share/man/man1

# Directories created here are readable by everyone, as installed programs' are.
umask 022

# Everything downloaded lives in $tmp until it is checked; $pending is the one file being
# copied into place at any moment. Both go on exit, whatever the reason.
tmp=""
pending=""
cleanup() {
    if [ -n "$pending" ]; then rm -f "$pending"; fi
    if [ -n "$tmp" ]; then rm -rf "$tmp"; fi
}
trap cleanup EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM
tmp=$(mktemp -d "${TMPDIR:-/tmp}/crontap-run-install.XXXXXX")

# fetch URL FILE
fetch() {
    case "$1" in
        file://*)
            # curl reads file:// URLs itself (and decodes %20 and the like); without curl,
            # the path is read directly.
            if have curl; then
                curl -fsS -o "$2" "$1"
            else
                path=${1#file://}
                path=${path#localhost}
                cp "$path" "$2"
            fi
            ;;
        *)
            if have curl; then
                curl -fsSL --retry 2 -o "$2" "$1"
            elif have wget; then
                wget -q -O "$2" "$1"
            else
                die "curl or wget is needed to download $1"
            fi
            ;;
    esac
}

fetch "$base_url/SHA256SUMS" "$tmp/SHA256SUMS" || die "cannot download $base_url/SHA256SUMS"
fetch "$base_url/$archive" "$tmp/$archive" || die "cannot download $base_url/$archive"

# The expected checksum: the one line naming the archive ("*" marks sha256sum's binary mode).
expected=$(awk -v f="$archive" '$2 == f || $2 == "*" f { print $1 }' "$tmp/SHA256SUMS" | tr 'A-F' 'a-f')
case "$expected" in
    "") die "SHA256SUMS has no entry for $archive; not installing" ;;
    *[!0-9a-f]*) die "SHA256SUMS has no single well-formed entry for $archive; not installing" ;;
esac
[ ${#expected} -eq 64 ] || die "SHA256SUMS has a malformed entry for $archive; not installing"
if have sha256sum; then
    actual=$(sha256sum "$tmp/$archive")
elif have shasum; then
    actual=$(shasum -a 256 "$tmp/$archive")
else
    die "sha256sum or shasum is needed to verify the download; not installing"
fi
actual=${actual%% *}
if [ "$actual" != "$expected" ]; then
    die "checksum mismatch for $archive (expected $expected, got $actual): the download is corrupt or was tampered with; not installing"
fi

tar -xzf "$tmp/$archive" -C "$tmp" || die "cannot unpack $archive"
src=$tmp/$name-$target
for f in "$name" "man/$name.1" "man/$name-history.1"; do
    [ -f "$src/$f" ] || die "$archive has no $name-$target/$f; not installing"
done

# Refuse a binary that does not run here, or is not the version asked for, before anything
# already installed is replaced.
got=$("$src/$name" --version) || die "the downloaded $name does not run on this machine; not installing"
if [ -n "$version" ] && [ "$got" != "$name $version" ]; then
    die "release v$version holds a binary that reports \"$got\"; not installing"
fi

# install_file SRC DIR MODE: copy to a temporary name in DIR, then rename over the old file.
install_file() {
    pending=$2/.$(basename "$1").install-tmp
    cp "$1" "$pending"
    chmod "$3" "$pending"
    mv -f "$pending" "$2/$(basename "$1")"
    pending=""
}

mkdir -p "$bindir" "$mandir" || die "cannot create $bindir and $mandir"
install_file "$src/man/$name.1" "$mandir" 0644
install_file "$src/man/$name-history.1" "$mandir" 0644
# Releases made before `crontap-run check` existed have no page for it.
[ ! -f "$src/man/$name-check.1" ] || install_file "$src/man/$name-check.1" "$mandir" 0644
# Nor before `crontap-run plan`.
[ ! -f "$src/man/$name-plan.1" ] || install_file "$src/man/$name-plan.1" "$mandir" 0644
# Nor before `crontap-run heartbeat`.
for page in heartbeat heartbeat-create heartbeat-pings heartbeat-verify; do
    [ ! -f "$src/man/$name-$page.1" ] || install_file "$src/man/$name-$page.1" "$mandir" 0644
done
# The binary goes last: once it is in place, everything else is too.
install_file "$src/$name" "$bindir" 0755

installed=$("$bindir/$name" --version) || die "the installed $bindir/$name does not run"
if [ -n "$version" ] && [ "$installed" != "$name $version" ]; then
    die "$bindir/$name reports \"$installed\", not $name $version"
fi

case ":${PATH:-}:" in
    *":$bindir:"*) note="" ;;
    *) note="; add $bindir to PATH to run it by name" ;;
esac
echo "installed $installed as $bindir/$name, man pages in $mandir$note"
