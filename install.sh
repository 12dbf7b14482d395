#!/bin/sh
# Installs crontap-run from this source checkout: builds the release binary with cargo and
# copies it to <prefix>/bin/crontap-run (default prefix /usr/local as root, ~/.local
# otherwise). Running it again replaces the binary in place.
#
#   sh install.sh [--prefix DIR]
set -eu

usage() {
    echo "usage: sh install.sh [--prefix DIR]" >&2
}

prefix=""
while [ $# -gt 0 ]; do
    case "$1" in
        --prefix)
            [ $# -ge 2 ] || { usage; exit 2; }
            prefix=$2
            shift 2
            ;;
        --prefix=*)
            prefix=${1#--prefix=}
            shift
            ;;
        -h | --help)
            usage
            exit 0
            ;;
        *)
            echo "install.sh: unknown option: $1" >&2
            usage
            exit 2
            ;;
    esac
done

if [ -z "$prefix" ]; then
    if [ "$(id -u)" -eq 0 ]; then prefix=/usr/local; else prefix=$HOME/.local; fi
fi

if ! command -v cargo >/dev/null 2>&1; then
    echo "install.sh: cargo is needed to build crontap-run from source (see https://rustup.rs)" >&2
    exit 1
fi

cd "$(dirname "$0")"
cargo build --locked --release
mkdir -p "$prefix/bin"
# Copy next to the target and rename, so a running crontap-run is never half-overwritten.
tmp="$prefix/bin/.crontap-run.$$"
trap 'rm -f "$tmp"' EXIT
cp target/release/crontap-run "$tmp"
chmod 0755 "$tmp"
mv -f "$tmp" "$prefix/bin/crontap-run"
trap - EXIT
echo "installed $prefix/bin/crontap-run ($("$prefix/bin/crontap-run" --version))"
