#!/usr/bin/env bash
# Builds the release artefacts in dist/ (removed and recreated on every run):
#
#   crontap-run-x86_64-unknown-linux-musl.tar.gz   binary, README, LICENSE, man pages, completions
#   crontap-run_<version>_amd64.deb                the same, laid out for Debian
#   crontap-run-full-x86_64-unknown-linux-musl.tar.gz
#                                                  the same, its binary built with the
#                                                  PostgreSQL and Redis state stores
#   install.sh                                     the installer, for `curl … | sh`
#   SHA256SUMS                                     checksums of the others, in sha256sum's format
#
# The binary is the static musl build; the script stops if it is dynamic or larger than
# 4 MiB, because install.sh, FROM-scratch images and the chroot test rely on both. Man pages
# and completions come from `cargo xtask assets`, generated from the same clap definition as
# --help, so they cannot drift from it.
#
#   packaging/release.sh
#
# Environment: DEB_MAINTAINER overrides the .deb's Maintainer field; SOURCE_DATE_EPOCH (default:
# the last commit's time) fixes the timestamps inside the archives, so that two builds of the
# same commit give the same files.
set -euo pipefail
cd "$(dirname "$0")/.."

target=x86_64-unknown-linux-musl
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

# Files are created readable by all and writable by the owner only, whatever the caller's
# umask, so that the archives carry the modes an installed program should have.
umask 022

rm -rf dist
mkdir dist
stage=$(mktemp -d "${TMPDIR:-/tmp}/crontap-run-release.XXXXXX")
trap 'rm -rf "$stage"' EXIT

echo "== build $name $version for $target"
cargo build --locked --release --target "$target"
bin=target/$target/release/$name

size=$(stat -c %s "$bin")
[ "$size" -le "$max_size" ] || die "$bin is $size bytes, over the $max_size-byte (4 MiB) limit"
# A dynamically linked ELF names its loader in a PT_INTERP program header.
headers=$(readelf -l "$bin") || die "readelf cannot read $bin"
if grep -q INTERP <<<"$headers"; then
    die "$bin is not static (it has a program interpreter)"
fi
reported=$("$bin" --version)
[ "$reported" = "$name $version" ] || die "$bin --version says '$reported', expected '$name $version'"
echo "$bin: $size bytes, static"

echo "== man pages and completions"
cargo xtask assets "$stage/assets" >/dev/null
for f in man/$name.1 man/$name-history.1 man/$name-check.1 completions/$name.bash completions/_$name completions/$name.fish; do
    [ -s "$stage/assets/$f" ] || die "cargo xtask assets did not write $f"
done

# Archives that depend only on their contents: entries sorted, owned by root, all dated
# at $epoch, and gzip without the name and time of its input (-n).
reproducible_tar() {
    tar --sort=name --owner=0 --group=0 --numeric-owner \
        --mtime="@$epoch" --format=gnu "$@"
}

echo "== tar.gz"
top=$name-$target
tree=$stage/$top
mkdir -p "$tree/man" "$tree/completions"
install -m 0755 "$bin" "$tree/$name"
install -m 0644 README.md LICENSE "$tree/"
install -m 0644 "$stage/assets/man/"*.1 "$tree/man/"
install -m 0644 "$stage/assets/completions/"* "$tree/completions/"
reproducible_tar -C "$stage" -cf - "$top" | gzip -9n >"dist/$top.tar.gz"

echo "== deb"
deb=$stage/deb
doc=$deb/usr/share/doc/$name
mkdir -p "$deb/DEBIAN" "$deb/usr/bin" "$deb/usr/share/man/man1" "$doc" \
    "$deb/usr/share/bash-completion/completions" \
    "$deb/usr/share/zsh/vendor-completions" \
    "$deb/usr/share/fish/vendor_completions.d" \
    "$deb/usr/share/lintian/overrides"
install -m 0755 "$bin" "$deb/usr/bin/$name"
for page in "$name.1" "$name-history.1" "$name-check.1"; do
    gzip -9n <"$stage/assets/man/$page" >"$deb/usr/share/man/man1/$page.gz"
done
install -m 0644 "$stage/assets/completions/$name.bash" "$deb/usr/share/bash-completion/completions/$name"
install -m 0644 "$stage/assets/completions/_$name" "$deb/usr/share/zsh/vendor-completions/_$name"
install -m 0644 "$stage/assets/completions/$name.fish" "$deb/usr/share/fish/vendor_completions.d/$name.fish"
# Debian policy: documentation over 4 KB is compressed; the copyright file never is.
gzip -9n <README.md >"$doc/README.md.gz"
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
# The binary is static-pie: an ELF of type DYN that links nothing, which lintian mistakes for
# a shared library missing its dependencies.
echo "$name: shared-library-lacks-prerequisites [usr/bin/$name]" >"$deb/usr/share/lintian/overrides/$name"
chmod 0644 "$doc/copyright" "$deb/usr/share/man/man1/"*.gz "$doc/README.md.gz" "$doc/changelog.gz" \
    "$deb/usr/share/lintian/overrides/$name"

# Installed-Size as dpkg-gencontrol computes it: each regular file rounded up to a KiB, plus
# one KiB for every directory.
installed_size=$(find "$deb/usr" -printf '%y %s\n' |
    awk '$1 == "f" { kib += int(($2 + 1023) / 1024); next } { kib += 1 } END { print kib }')
cat >"$deb/DEBIAN/control" <<EOF
Package: $name
Version: $version
Architecture: amd64
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
SOURCE_DATE_EPOCH=$epoch dpkg-deb --root-owner-group -Zxz --build "$deb" "dist/${name}_${version}_amd64.deb" >/dev/null

echo "== full flavour: the PostgreSQL and Redis state stores built in"
# A target directory of its own, so the default binary above is not overwritten. The two
# clients make it larger than the default build's 4 MiB bound; it is static all the same.
cargo build --locked --release --target "$target" --features postgres,redis --target-dir target/full
full_bin=target/full/$target/release/$name
full_headers=$(readelf -l "$full_bin") || die "readelf cannot read $full_bin"
if grep -q INTERP <<<"$full_headers"; then
    die "$full_bin is not static (it has a program interpreter)"
fi
echo "$full_bin: $(stat -c %s "$full_bin") bytes, static"
full_top=$name-full-$target
full_tree=$stage/$full_top
mkdir -p "$full_tree"
cp -a "$tree/." "$full_tree/"
install -m 0755 "$full_bin" "$full_tree/$name"
reproducible_tar -C "$stage" -cf - "$full_top" | gzip -9n >"dist/$full_top.tar.gz"

echo "== install.sh"
# The one-line installer is downloaded from the release too (README: Install).
install -m 0755 install.sh dist/install.sh

echo "== SHA256SUMS"
# Listed before SHA256SUMS exists, so it covers every other file and not itself.
(cd dist && files=(*) && sha256sum -- "${files[@]}" >"$stage/SHA256SUMS")
mv "$stage/SHA256SUMS" dist/SHA256SUMS

ls -l dist
