#!/usr/bin/env bash
# Builds the release artefacts in dist/ (removed and recreated on every run), for each of
# x86_64 and aarch64 (arm64) Linux, <target> being x86_64-unknown-linux-musl or
# aarch64-unknown-linux-musl:
#
#   crontap-run-<target>.tar.gz          binary, README, docs/, LICENSE, man pages, completions
#   crontap-run_<version>_<arch>.deb     the same, laid out for Debian (<arch>: amd64, arm64)
#   crontap-run-full-<target>.tar.gz     the same, its binary built with the PostgreSQL and
#                                        Redis state stores
#
# and once:
#
#   install.sh                           the installer, for `curl … | sh`
#   SHA256SUMS                           checksums of the others, in sha256sum's format
#
# Each binary is a static musl build; the script stops if one is dynamic, is not for its
# architecture, or (default flavour) is larger than 4 MiB, because install.sh, FROM-scratch
# images and the chroot test rely on that. The aarch64 binaries are cross-compiled with
# Debian's gcc-aarch64-linux-gnu (see .cargo/config.toml) and run under qemu-aarch64-static
# (Debian's qemu-user-static) to check what they report. Man pages and completions come from
# `cargo xtask assets`, generated from the same clap definition as --help, so they cannot
# drift from it; they are the same for every architecture.
#
#   packaging/release.sh
#
# Environment: DEB_MAINTAINER overrides the .deb's Maintainer field; SOURCE_DATE_EPOCH (default:
# the last commit's time) fixes the timestamps inside the archives, so that two builds of the
# same commit give the same files.
set -euo pipefail
cd "$(dirname "$0")/.."

targets=(x86_64-unknown-linux-musl aarch64-unknown-linux-musl)
name=crontap-run
max_size=4194304 # 4 MiB
maintainer=${DEB_MAINTAINER:-The crontap-run authors <crontap-run@crontap.example>}

die() {
    echo "release.sh: $*" >&2
    exit 1
}

# The version is the [package] one in Cargo.toml (the first `version =` of that section, not a
# dependency's).
version=$(awk '
    /^\[/ { in_package = ($0 == "[package]") }
    in_package && /^version *= *"/ { sub(/^version *= *"/, ""); sub(/".*/, ""); print; exit }
' Cargo.toml)
[ -n "$version" ] || die "no [package] version in Cargo.toml"

# Not exported: cargo would rebuild ring (its build script watches SOURCE_DATE_EPOCH) each
# time the value changes, i.e. on every commit.
epoch=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}

# TARGET's name for Debian (the .deb's Architecture) and for readelf -h (Machine:).
deb_arch() {
    case "$1" in
        x86_64-*) echo amd64 ;;
        aarch64-*) echo arm64 ;;
        *) die "no Debian architecture known for $1" ;;
    esac
}
elf_machine() {
    case "$1" in
        x86_64-*) echo "Advanced Micro Devices X86-64" ;;
        aarch64-*) echo AArch64 ;;
        *) die "no ELF machine known for $1" ;;
    esac
}

# run_for TARGET CMD ARGS...: runs CMD, a binary built for TARGET: directly on a machine of
# that architecture, otherwise under qemu's user-mode emulator for it (qemu-user-static).
run_for() {
    local arch=${1%%-*}
    shift
    if [ "$arch" = "$(uname -m)" ]; then
        "$@"
    else
        "qemu-$arch-static" "$@"
    fi
}
for target in "${targets[@]}"; do
    arch=${target%%-*}
    [ "$arch" = "$(uname -m)" ] || command -v "qemu-$arch-static" >/dev/null ||
        die "qemu-$arch-static is needed to check the $target binaries: install qemu-user-static"
done

# Files are created readable by all and writable by the owner only, whatever the caller's
# umask, so that the archives carry the modes an installed program should have.
umask 022

rm -rf dist
mkdir dist
stage=$(mktemp -d "${TMPDIR:-/tmp}/crontap-run-release.XXXXXX")
trap 'rm -rf "$stage"' EXIT

# build TARGET_DIR [CARGO_ARGS...]: builds the release binaries for every target in one cargo
# invocation (the build scripts and proc-macros, which run on this machine, are built once
# for all targets, and the two final link-time-optimised compilations, each on one core,
# run side by side), then checks each with `check TARGET TARGET_DIR`.
build() {
    local dir=$1 target target_args=() start=$SECONDS
    shift
    for target in "${targets[@]}"; do target_args+=(--target "$target"); done
    cargo build --locked --release "${target_args[@]}" --target-dir "$dir" "$@"
    echo "cargo build for ${targets[*]} in $dir: $((SECONDS - start)) s"
    for target in "${targets[@]}"; do check "$target" "$dir"; done
}

# check TARGET TARGET_DIR: checks that TARGET's binary in TARGET_DIR is static, is for
# TARGET's machine and reports this version.
check() {
    local target=$1 dir=$2 built headers machine reported
    built=$dir/$target/release/$name
    headers=$(readelf -hl "$built") || die "readelf cannot read $built"
    # A dynamically linked ELF names its loader in a PT_INTERP program header.
    if grep -q INTERP <<<"$headers"; then
        die "$built is not static (it has a program interpreter)"
    fi
    machine=$(elf_machine "$target")
    grep -Eq "^ *Machine: +$machine\$" <<<"$headers" || die "$built is not an $machine binary"
    reported=$(run_for "$target" "$built" --version)
    [ "$reported" = "$name $version" ] || die "$built --version says '$reported', expected '$name $version'"
    echo "$built: $(stat -c %s "$built") bytes, static, $machine"
}

# Archives that depend only on their contents: entries sorted, owned by root, all dated
# at $epoch, and gzip without the name and time of its input (-n).
reproducible_tar() {
    tar --sort=name --owner=0 --group=0 --numeric-owner \
        --mtime="@$epoch" --format=gnu "$@"
}

# archive TOP BIN: dist/TOP.tar.gz, holding BIN as TOP/crontap-run beside README.md, the
# guides it links to (docs/), LICENSE, the man pages and the completions.
archive() {
    local top=$1 bin=$2
    local tree=$stage/$top
    mkdir -p "$tree/man" "$tree/completions" "$tree/docs"
    install -m 0755 "$bin" "$tree/$name"
    install -m 0644 README.md LICENSE "$tree/"
    install -m 0644 docs/*.md "$tree/docs/"
    install -m 0644 "$stage/assets/man/"*.1 "$tree/man/"
    install -m 0644 "$stage/assets/completions/"* "$tree/completions/"
    reproducible_tar -C "$stage" -cf - "$top" | gzip -9n >"dist/$top.tar.gz"
}

# debian ARCH BIN: dist/crontap-run_<version>_ARCH.deb, with BIN as /usr/bin/crontap-run.
debian() {
    local arch=$1 bin=$2
    local deb=$stage/deb-$arch
    local doc=$deb/usr/share/doc/$name
    local page installed_size
    mkdir -p "$deb/DEBIAN" "$deb/usr/bin" "$deb/usr/share/man/man1" "$doc" \
        "$deb/usr/share/bash-completion/completions" \
        "$deb/usr/share/zsh/vendor-completions" \
        "$deb/usr/share/fish/vendor_completions.d" \
        "$deb/usr/share/lintian/overrides"
    install -m 0755 "$bin" "$deb/usr/bin/$name"
    for page in "$name.1" "$name-history.1" "$name-check.1" "$name-plan.1" "$name-heartbeat.1" \
        "$name-heartbeat-create.1" "$name-heartbeat-pings.1" "$name-heartbeat-verify.1"; do
        gzip -9n <"$stage/assets/man/$page" >"$deb/usr/share/man/man1/$page.gz"
    done
    install -m 0644 "$stage/assets/completions/$name.bash" "$deb/usr/share/bash-completion/completions/$name"
    install -m 0644 "$stage/assets/completions/_$name" "$deb/usr/share/zsh/vendor-completions/_$name"
    install -m 0644 "$stage/assets/completions/$name.fish" "$deb/usr/share/fish/vendor_completions.d/$name.fish"
    # Debian policy: documentation over 4 KB is compressed; the copyright file never is.
    gzip -9n <README.md >"$doc/README.md.gz"
    # The guides README.md links to, beside it as they are in the repository.
    local guide
    mkdir -p "$doc/docs"
    for guide in docs/*.md; do
        gzip -9n <"$guide" >"$doc/$guide.gz"
    done
    {
        echo "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/"
        echo "Upstream-Name: $name"
        echo "Source: https://github.com/crontap/crontap-run"
        echo
        echo "Files: *"
        echo "Copyright: 2026 The crontap-run authors"
        echo "License: MIT"
        echo
        echo "License: MIT"
        # The license text as a field continuation: each line indented, blank lines as " .".
        sed -n '/^Permission is hereby granted/,$p' LICENSE | sed -e 's/^$/./' -e 's/^/ /'
    } >"$doc/copyright"
    # Debian policy wants a changelog in every package; this one points to the release notes.
    {
        echo "$name ($version) unstable; urgency=medium"
        echo
        echo "  * Release $version: https://github.com/crontap/crontap-run/releases/tag/v$version"
        echo
        echo " -- $maintainer  $(date -u -R -d "@$epoch")"
    } | gzip -9n >"$doc/changelog.gz"
    # The x86_64 binary is static-pie: an ELF of type DYN that links nothing, which lintian
    # mistakes for a shared library missing its dependencies. (The aarch64 one is a plain
    # static EXEC, for which the override is idle; one package layout serves both.)
    echo "$name: shared-library-lacks-prerequisites [usr/bin/$name]" >"$deb/usr/share/lintian/overrides/$name"
    chmod 0644 "$doc/copyright" "$deb/usr/share/man/man1/"*.gz "$doc/README.md.gz" "$doc/changelog.gz" "$doc/docs/"*.gz \
        "$deb/usr/share/lintian/overrides/$name"

    # Installed-Size as dpkg-gencontrol computes it: each regular file rounded up to a KiB,
    # plus one KiB for every directory.
    installed_size=$(find "$deb/usr" -printf '%y %s\n' |
        awk '$1 == "f" { kib += int(($2 + 1023) / 1024); next } { kib += 1 } END { print kib }')
    cat >"$deb/DEBIAN/control" <<EOF
Package: $name
Version: $version
Architecture: $arch
Maintainer: $maintainer
Installed-Size: $installed_size
Section: utils
Priority: optional
Homepage: https://github.com/crontap/crontap-run
Description: run a scheduled command and report it to a Crontap heartbeat URL
 crontap-run prefixes a cron line, systemd service or Kubernetes CronJob
 command. It runs the command, passes its output through unchanged, exits
 with the command's own status, and pings a Crontap heartbeat URL: a success
 ping, or a failure ping with a short summary scrubbed of credentials and
 personal data.
 .
 The binary is static and has no runtime dependencies.
EOF
    (cd "$deb" && find usr -type f -print0 | sort -z | xargs -0 md5sum) >"$deb/DEBIAN/md5sums"
    chmod 0644 "$deb/DEBIAN/control" "$deb/DEBIAN/md5sums"
    # --root-owner-group: every file is root:root in the package, whoever builds it.
    SOURCE_DATE_EPOCH=$epoch dpkg-deb --root-owner-group -Zxz --build "$deb" "dist/${name}_${version}_$arch.deb" >/dev/null
}

echo "== build $name $version"
build target
echo "== build $name $version, full flavour: the PostgreSQL and Redis state stores built in"
# A target directory of its own, so that the default binaries are not overwritten. The two
# clients make it larger than the default build's 4 MiB bound; it is static all the same.
build target/full --features postgres,redis

# After the builds: xtask is a debug build, in target/debug, which .ci/run's test builds use
# while this script's release builds run beside them; its lock is taken here only briefly.
echo "== man pages and completions"
cargo xtask assets "$stage/assets" >/dev/null
for f in man/$name.1 man/$name-history.1 man/$name-check.1 man/$name-plan.1 man/$name-heartbeat.1 man/$name-heartbeat-create.1 man/$name-heartbeat-pings.1 man/$name-heartbeat-verify.1 completions/$name.bash completions/_$name completions/$name.fish; do
    [ -s "$stage/assets/$f" ] || die "cargo xtask assets did not write $f"
done

for target in "${targets[@]}"; do
    built=target/$target/release/$name
    size=$(stat -c %s "$built")
    [ "$size" -le "$max_size" ] || die "$built is $size bytes, over the $max_size-byte (4 MiB) limit"
    echo "== $target: tar.gz"
    archive "$name-$target" "$built"
    echo "== $target: deb"
    debian "$(deb_arch "$target")" "$built"
    echo "== $target: full flavour tar.gz"
    archive "$name-full-$target" "target/full/$target/release/$name"
done

echo "== install.sh"
# The one-line installer is downloaded from the release too (README: Install).
install -m 0755 install.sh dist/install.sh

echo "== SHA256SUMS"
# Listed before SHA256SUMS exists, so it covers every other file and not itself.
(cd dist && files=(*) && sha256sum -- "${files[@]}" >"$stage/SHA256SUMS")
mv "$stage/SHA256SUMS" dist/SHA256SUMS

ls -l dist
