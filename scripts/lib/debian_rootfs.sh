#!/usr/bin/env bash
# Prints the path of the cached minimal Debian bookworm root filesystem (debootstrap minbase +
# python3-minimal, as a tarball under .cache/images/), building it first when missing (about a minute,
# needs debootstrap and the Debian mirror). One root for both local images: the python sandbox image
# (scripts/images/python) and the station image (`stn image build`), so a machine pays debootstrap once.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=programs.sh
source "$root/scripts/lib/programs.sh"
mirror=${STN_DEBIAN_MIRROR:-http://deb.debian.org/debian}
cache="$root/.cache/images"
tarball="$cache/debian-bookworm-python3.tar"
mkdir -p "$cache"
if [ ! -s "$tarball" ]; then
  debootstrap=$(find_program debootstrap debootstrap) ||
    { echo "images: debootstrap missing (apt-get install debootstrap)" >&2; exit 1; }
  dir=$(mktemp -d)
  trap 'rm -rf "$dir"' EXIT
  echo "images: debootstrap bookworm + python3-minimal (first run only, about a minute)" >&2
  "$debootstrap" --variant=minbase --include=python3-minimal bookworm "$dir" "$mirror" >"$cache/debootstrap.log" 2>&1 ||
    { echo "images: debootstrap failed; see $cache/debootstrap.log" >&2; exit 1; }
  # Drop what an image never needs: apt caches, docs, man pages, locales.
  rm -rf "$dir"/var/cache/apt/* "$dir"/var/lib/apt/lists/* "$dir"/usr/share/doc/* "$dir"/usr/share/man/* \
    "$dir"/usr/share/locale/*
  tar -C "$dir" -cf "$tarball.tmp" . && mv "$tarball.tmp" "$tarball"
fi
echo "$tarball"
