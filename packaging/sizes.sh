#!/usr/bin/env bash
# The binary size table in README.md (Performance, Size), from the binaries in dist/ that
# packaging/release.sh built, so the table is measured rather than typed.
#
#   packaging/sizes.sh            print the table
#   packaging/sizes.sh --write    put it in README.md, between the sizes:begin/end markers
#   packaging/sizes.sh --check    fail if README.md's figures are more than 1 % off
#
# --check is what CI runs (packaging/test-release.sh, after release.sh): it lets small
# changes through, so that not every commit needs a release build, and stops the table
# from drifting further than that. Run --write after packaging/release.sh to refresh it.
set -euo pipefail
cd "$(dirname "$0")/.."

target=x86_64-unknown-linux-musl
name=crontap-run
max_size=4194304 # 4 MiB, release.sh's bound for the default binary
readme=README.md
begin='<!-- sizes:begin (packaging/sizes.sh --write) -->'
end='<!-- sizes:end -->'

die() {
    echo "sizes.sh: $*" >&2
    exit 1
}

mode=${1:-print}
case "$mode" in
    print | --write | --check) ;;
    *)
        echo "usage: packaging/sizes.sh [--write | --check]" >&2
        exit 2
        ;;
esac

# Bytes of the binary inside a release archive: exactly what users install.
size_in() {
    local archive=dist/$1-$target.tar.gz
    [ -f "$archive" ] || die "$archive is missing; run packaging/release.sh first"
    tar -xOzf "$archive" "$1-$target/$name" | wc -c
}

default=$(size_in "$name")
full=$(size_in "$name-full")

mib() {
    awk -v b="$1" 'BEGIN { printf "%.2f MiB", b / 1048576 }'
}
# 3945608 -> 3,945,608
bytes() {
    sed -e ':a' -e 's/\B[0-9]\{3\}\>/,&/' -e 'ta' <<<"$1"
}

table() {
    echo "| build | bytes |"
    echo "|---|---|"
    echo "| default (\`packaging/release.sh\` fails above 4 MiB) | $(bytes "$default") ($(mib "$default"), $(bytes $((max_size - default))) bytes under) |"
    echo "| crontap-run-full (\`--features postgres,redis\`) | $(bytes "$full") ($(mib "$full")) |"
    echo
    echo "Measured by \`packaging/sizes.sh\` from the release archives, built with $(rustc --version | cut -d' ' -f1-2)."
}

case "$mode" in
    print)
        table
        ;;
    --write)
        grep -qF "$begin" "$readme" || die "$readme has no '$begin' line"
        fresh=$(mktemp)
        trap 'rm -f "$fresh"' EXIT
        table >"$fresh"
        awk -v begin="$begin" -v end="$end" -v fresh="$fresh" '
            $0 == begin { print; while ((getline line < fresh) > 0) print line; skip = 1; next }
            $0 == end { skip = 0 }
            !skip { print }
        ' "$readme" >"$readme.new"
        mv "$readme.new" "$readme"
        echo "sizes.sh: $readme updated"
        ;;
    --check)
        # The first figure of each row in the marked block, commas removed.
        written=$(awk -v begin="$begin" -v end="$end" '
            $0 == begin { inside = 1; next }
            $0 == end { inside = 0 }
            inside && /^\| (default|crontap-run-full)/ { split($0, cells, "|"); n = cells[3]; sub(/^ */, "", n); sub(/ .*/, "", n); gsub(/,/, "", n); print n }
        ' "$readme")
        read -r -d '' readme_default readme_full <<<"$written" || true
        if [ -z "$readme_default" ] || [ -z "$readme_full" ]; then
            die "no size table between the markers in $readme"
        fi
        off=0
        for pair in "default $default $readme_default" "full $full $readme_full"; do
            read -r what measured stated <<<"$pair"
            if ! awk -v m="$measured" -v s="$stated" 'BEGIN { d = m - s; if (d < 0) d = -d; exit !(d * 100 <= s) }'; then
                echo "sizes.sh: $what binary is $measured bytes, $readme says $stated (more than 1 % off)" >&2
                off=1
            fi
        done
        [ "$off" -eq 0 ] || die "run packaging/sizes.sh --write and commit $readme"
        echo "sizes.sh: $readme's size table is within 1 % of the release binaries"
        ;;
esac
