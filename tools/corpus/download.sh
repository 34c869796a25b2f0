#!/usr/bin/env bash
# Downloads the packages of tools/corpus/packages.txt into tools/corpus/out/debs with
# `apt-get download` (no installation, no root needed except for `apt-get update`).
# Packages already downloaded are skipped, so the script can be re-run after an interruption.
#
#   sudo apt-get update            # once, so that apt knows the current versions
#   bash tools/corpus/download.sh  # then: python3 tools/corpus/extract.py
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
list="${1:-$here/packages.txt}"
dest="${DEBS_DIR:-$here/out/debs}"
mkdir -p "$dest"
cd "$dest"

# apt-get download as root warns that it cannot drop privileges to _apt for the download.
apt_opts=()
if [ "$(id -u)" = 0 ]; then apt_opts+=(-o APT::Sandbox::User=root); fi

mapfile -t wanted < <(sed -e 's/#.*//' -e 's/[[:space:]]//g' "$list" | grep -v '^$')
todo=()
for p in "${wanted[@]}"; do
    compgen -G "${p}_*.deb" > /dev/null || todo+=("$p")
done
echo "${#wanted[@]} packages listed, ${#todo[@]} to download into $dest"

missing=()
batch=50
for ((i = 0; i < ${#todo[@]}; i += batch)); do
    chunk=("${todo[@]:i:batch}")
    if ! apt-get download -q "${apt_opts[@]}" "${chunk[@]}" > /dev/null 2> apt-download.err; then
        # one unknown name fails the whole batch: retry one by one
        for p in "${chunk[@]}"; do
            compgen -G "${p}_*.deb" > /dev/null && continue
            apt-get download -q "${apt_opts[@]}" "$p" > /dev/null 2>> apt-download.err || missing+=("$p")
        done
    fi
    echo "  $((i + ${#chunk[@]})) / ${#todo[@]}"
done
rm -f apt-download.err

echo "downloaded: $(ls -1 ./*.deb 2> /dev/null | wc -l) .deb files, $(du -sh . | cut -f1)"
if [ ${#missing[@]} -gt 0 ]; then
    echo "not available (${#missing[@]}): ${missing[*]}" >&2
fi
