#!/usr/bin/env bash
# Rebuilds the demo model's corpus from Debian's gettext catalogs, start to finish:
#   packages.txt -> out/debs (apt-get download, ~1.4 GB) -> out/raw (extract.py)
#   -> out/corpus/*.tsv and out/corpus.tar.xz (clean.py)
# About 35 minutes on two CPU cores, most of it extract.py and clean.py. Needs a Debian 12
# machine with apt access; `apt-get update` must have run (as root) once before.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
nice_cmd=(nice -n 10)

"${nice_cmd[@]}" bash "$here/download.sh"
"${nice_cmd[@]}" python3 "$here/extract.py"
"${nice_cmd[@]}" python3 "$here/clean.py"
echo "corpus: $here/out/corpus.tar.xz"
