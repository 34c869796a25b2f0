#!/usr/bin/env python3
"""Proposes the package list (packages.txt) from the apt indexes of this Debian release.

Needs `apt-file update` (for the Contents indexes) and `apt-get update` (for package sizes).
Every binary package that ships gettext catalogs (`.../<locale>/LC_MESSAGES/*.mo`) is scored by
the number of catalogs it holds in the languages the demo model wants, weighted per language,
divided by its download size: many catalogs per megabyte first. Packages are taken in that
order until the download budget is spent. Huge data packages (games, sample media) and
packages whose catalog set another candidate already ships (two versions of one library) are
left out. The result is a proposal: packages.txt is this output, committed, with measured
yields in docs/demo-model.md.

    python3 tools/corpus/select_packages.py --budget-mb 1400 > tools/corpus/packages.txt
"""

from __future__ import annotations

import argparse
import collections
import glob
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from langmap import locale_to_code  # noqa: E402

# How much one catalog in a language is worth when ranking packages. The six main languages
# of the demo model first; the minority languages of Hunyuan-MT are scarce, so every catalog
# of theirs counts double.
WEIGHTS = collections.defaultdict(lambda: 0.1, {
    "zh": 1.0, "ja": 1.0, "de": 1.0, "fr": 1.0, "es": 1.0, "ru": 1.0,
    "zh-Hant": 0.5, "ko": 0.5, "pt": 0.5, "it": 0.5,
    "ug": 2.0, "kk": 2.0, "bo": 2.0, "mn": 2.0,
})
MAX_PACKAGE_MB = 30.0          # above this a package is mostly not catalogs
ALWAYS = [                      # large, well-translated catalogs taken whatever their ratio
    "gimp-data", "inkscape", "gcc-12-locales", "postgresql-15", "gnucash-common",
    "digikam-data", "evolution-common", "gnumeric-common", "vlc-l10n", "libgtk-3-common",
    "libgtk-4-common", "libglib2.0-data", "coreutils", "apt", "dpkg", "aptitude-common",
    "util-linux-locales", "bash", "tar", "grep", "gettext", "synaptic", "gparted-common",
    "transmission-common", "libc-l10n", "binutils-common", "iso-codes",
]
NEVER = re.compile(r"(-dbg|-dbgsym|-doc)$")
MO_RE = re.compile(r"^(\S*/([^/\s]+)/LC_MESSAGES/([^/\s]+)\.mo)\s+(\S+)$")


def apt_lists() -> list[str]:
    return sorted(glob.glob("/var/lib/apt/lists/*_dists_*"))


def read_index(path: str) -> str:
    return subprocess.run(["/usr/lib/apt/apt-helper", "cat-file", path], check=True,
                          capture_output=True, text=True, errors="replace").stdout


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    ap.add_argument("--budget-mb", type=float, default=1400.0)
    ap.add_argument("--arch", default="amd64")
    ap.add_argument("--stats", help="write the per-package table (TSV) here")
    args = ap.parse_args()

    sizes: dict[str, int] = {}
    for f in apt_lists():
        if f.endswith(f"binary-{args.arch}_Packages") or f"binary-{args.arch}_Packages." in f:
            for block in read_index(f).split("\n\n"):
                m = re.search(r"^Package: (\S+)", block, re.M)
                s = re.search(r"^Size: (\d+)", block, re.M)
                if m and s:
                    sizes[m.group(1)] = max(sizes.get(m.group(1), 0), int(s.group(1)))
    if not sizes:
        sys.exit("no Packages index: run apt-get update")

    score = collections.Counter()
    domains: dict[str, set] = collections.defaultdict(set)
    seen_contents = False
    for f in apt_lists():
        if "Contents-" not in f or not (f"Contents-{args.arch}" in f or "Contents-all" in f):
            continue
        if "Contents-udeb" in f:
            continue
        seen_contents = True
        for line in read_index(f).splitlines():
            m = MO_RE.match(line)
            if not m:
                continue
            code = locale_to_code(m.group(2))
            if code is None:
                continue
            for p in m.group(4).split(","):
                p = p.rsplit("/", 1)[-1]
                score[p] += WEIGHTS[code]
                domains[p].add(m.group(3))
    if not seen_contents:
        sys.exit("no Contents index: apt-get install apt-file && apt-file update")

    rows = []
    for p, s in score.items():
        if p not in sizes or NEVER.search(p):
            continue
        mb = sizes[p] / 1e6
        rows.append((p, s, mb, s / (mb + 0.5)))
    # one package per identical catalog set (e.g. libwebkit2gtk-4.0 / -4.1 / webkitgtk-6.0)
    by_set: dict[frozenset, tuple] = {}
    for r in rows:
        key = frozenset(domains[r[0]])
        if key not in by_set or r[2] < by_set[key][2]:
            by_set[key] = r
    rows = sorted(by_set.values(), key=lambda r: -r[3])

    chosen, total = [], 0.0
    forced = [r for r in rows if r[0] in ALWAYS or r[0].startswith("libreoffice-l10n-")]
    for r in forced:
        chosen.append(r)
        total += r[2]
    for r in rows:
        if r in forced or r[2] > MAX_PACKAGE_MB:
            continue
        if total + r[2] > args.budget_mb:
            continue
        chosen.append(r)
        total += r[2]
    chosen.sort(key=lambda r: r[0])
    if args.stats:
        with open(args.stats, "w") as f:
            f.write("package\tscore\tsize_mb\tscore_per_mb\n")
            for r in rows:
                f.write(f"{r[0]}\t{r[1]:.1f}\t{r[2]:.2f}\t{r[3]:.2f}\n")
    print(f"# Debian 12 (bookworm) {args.arch} packages with gettext catalogs, chosen by "
          f"tools/corpus/select_packages.py --budget-mb {args.budget_mb:g}")
    print(f"# {len(chosen)} packages, {total:.0f} MB to download")
    for r in chosen:
        print(r[0])
    print(f"{len(chosen)} packages, {total:.0f} MB", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
