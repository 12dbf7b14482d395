#!/usr/bin/env bash
# The binary size table in bench/README.md (Size), from the binaries in dist/ that
# packaging/release.sh built, so the table is measured rather than typed.
#
#   packaging/sizes.sh            print the table
#   packaging/sizes.sh --write    put it in bench/README.md, between the sizes:begin/end markers
#   packaging/sizes.sh --check    fail if bench/README.md's figures are more than 1 % off
#
# --check is what CI runs (packaging/test-release.sh, after release.sh): it lets small
# changes through, so that not every commit needs a release build, and stops the table
# from drifting further than that. Run --write after packaging/release.sh to refresh it.
set -euo pipefail
cd "$(dirname "$0")/.."

targets=(x86_64-unknown-linux-musl aarch64-unknown-linux-musl)
flavours=(default full)
name=crontap-run
max_size=4194304 # 4 MiB, release.sh's bound for the default binary
readme=bench/README.md
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

# Bytes of the binary inside a release archive (FLAVOUR TARGET): exactly what users install.
size_in() {
    local top=$name-$2
    [ "$1" = default ] || top=$name-$1-$2
    local archive=dist/$top.tar.gz
    [ -f "$archive" ] || die "$archive is missing; run packaging/release.sh first"
    tar -xOzf "$archive" "$top/$name" | wc -c
}

# size[FLAVOUR/TARGET], for every flavour and target.
declare -A size
for flavour in "${flavours[@]}"; do
    for target in "${targets[@]}"; do
        size[$flavour/$target]=$(size_in "$flavour" "$target")
    done
done

mib() {
    awk -v b="$1" 'BEGIN { printf "%.2f MiB", b / 1048576 }'
}
# 3945608 -> 3,945,608
bytes() {
    sed -e ':a' -e 's/\B[0-9]\{3\}\>/,&/' -e 'ta' <<<"$1"
}

# One row per flavour, one column per target, in the order of $targets (--check relies on it).
table() {
    local target flavour b row
    row="| build |"
    for target in "${targets[@]}"; do row="$row \`$target\` |"; done
    echo "$row"
    echo "|---|$(printf -- '---|%.0s' "${targets[@]}")"
    for flavour in "${flavours[@]}"; do
        case "$flavour" in
            default) row="| default (\`packaging/release.sh\` fails above 4 MiB) |" ;;
            full) row="| crontap-run-full (\`--features postgres,redis\`) |" ;;
        esac
        for target in "${targets[@]}"; do
            b=${size[$flavour/$target]}
            if [ "$flavour" = default ]; then
                row="$row $(bytes "$b") ($(mib "$b"), $(bytes $((max_size - b))) bytes under) |"
            else
                row="$row $(bytes "$b") ($(mib "$b")) |"
            fi
        done
        echo "$row"
    done
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
        # "FLAVOUR COLUMN BYTES" for the first figure of each cell in the marked block's rows,
        # commas removed; column 1 is the first target.
        written=$(awk -v begin="$begin" -v end="$end" '
            $0 == begin { inside = 1; next }
            $0 == end { inside = 0 }
            inside && /^\| (default|crontap-run-full)/ {
                n = split($0, cells, "|")
                flavour = $2 == "default" ? "default" : "full"
                for (i = 3; i < n; i++) {
                    v = cells[i]; sub(/^ */, "", v); sub(/ .*/, "", v); gsub(/,/, "", v)
                    print flavour, i - 2, v
                }
            }
        ' "$readme")
        off=0
        for flavour in "${flavours[@]}"; do
            column=0
            for target in "${targets[@]}"; do
                column=$((column + 1))
                measured=${size[$flavour/$target]}
                stated=$(awk -v f="$flavour" -v c="$column" '$1 == f && $2 == c { print $3 }' <<<"$written")
                if [ -z "$stated" ]; then
                    echo "sizes.sh: $readme's size table has no figure for the $flavour $target binary" >&2
                    off=1
                elif ! awk -v m="$measured" -v s="$stated" 'BEGIN { d = m - s; if (d < 0) d = -d; exit !(d * 100 <= s) }'; then
                    echo "sizes.sh: the $flavour $target binary is $measured bytes, $readme says $stated (more than 1 % off)" >&2
                    off=1
                fi
            done
        done
        [ "$off" -eq 0 ] || die "run packaging/sizes.sh --write and commit $readme"
        echo "sizes.sh: $readme's size table is within 1 % of the release binaries"
        ;;
esac
