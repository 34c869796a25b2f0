#!/usr/bin/env python3
"""Extracts msgid -> msgstr pairs from the gettext catalogs inside the downloaded .deb files.

For every .deb in tools/corpus/out/debs, the data archive is streamed through
`dpkg-deb --fsys-tarfile` (nothing is installed or unpacked to disk) and every regular file
`.../<locale>/LC_MESSAGES/<domain>.mo` is parsed: /usr/share/locale, /usr/share/locale-langpack
and the other places programs keep gettext catalogs (LibreOffice's program/resource, Python
packages' locale folders, ...). Qt .qm files and other formats are not gettext and are skipped.
Locales are mapped to Hunyuan-MT codes by langmap.py; unmapped ones are skipped.

Writes out/raw/<code>.jsonl.gz, one JSON list per pair:
    [package, domain, locale, msgctxt or null, source (English), translation]
(only pairs with a non-empty translation different from its source; cleaning is clean.py's
job) and out/raw/extract_stats.json (pairs per language and per package).

    python3 tools/corpus/extract.py
"""

from __future__ import annotations

import argparse
import collections
import gzip
import json
import re
import subprocess
import sys
import tarfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from langmap import locale_to_code  # noqa: E402
from mo import MoError, pairs, parse_mo  # noqa: E402

MO_PATH = re.compile(r"(?:^|/)([^/]+)/LC_MESSAGES/([^/]+)\.mo$")


def package_of(deb: Path) -> str:
    return deb.name.split("_", 1)[0]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    ap.add_argument("--debs", type=Path, default=HERE / "out" / "debs")
    ap.add_argument("--out", type=Path, default=HERE / "out" / "raw")
    args = ap.parse_args()

    debs = sorted(args.debs.glob("*.deb"))
    if not debs:
        sys.exit(f"no .deb files in {args.debs}: run tools/corpus/download.sh first")
    args.out.mkdir(parents=True, exist_ok=True)
    for old in args.out.glob("*.jsonl.gz"):
        old.unlink()

    files: dict[str, gzip.GzipFile] = {}
    per_lang = collections.Counter()
    per_pkg: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    catalogs = collections.Counter()
    bad = []
    t0 = time.time()
    for i, deb in enumerate(debs):
        pkg = package_of(deb)
        proc = subprocess.Popen(["dpkg-deb", "--fsys-tarfile", str(deb)], stdout=subprocess.PIPE)
        try:
            with tarfile.open(fileobj=proc.stdout, mode="r|") as tar:
                for member in tar:
                    m = MO_PATH.search(member.name)
                    if not m or not member.isfile():
                        continue
                    code = locale_to_code(m.group(1))
                    if code is None:
                        continue
                    data = tar.extractfile(member).read()
                    try:
                        cat = parse_mo(data)
                    except MoError as e:
                        bad.append(f"{deb.name}:{member.name}: {e}")
                        continue
                    catalogs[code] += 1
                    f = files.get(code)
                    if f is None:
                        f = files[code] = gzip.open(args.out / f"{code}.jsonl.gz", "wt",
                                                    encoding="utf-8", compresslevel=3)
                    n = 0
                    for ctx, src, tgt in pairs(cat):
                        if not src or not tgt or src == tgt:
                            continue
                        f.write(json.dumps([pkg, m.group(2), m.group(1), ctx, src, tgt],
                                           ensure_ascii=False) + "\n")
                        n += 1
                    per_lang[code] += n
                    per_pkg[pkg][code] += n
        finally:
            proc.stdout.close()
            proc.wait()
        if (i + 1) % 100 == 0 or i + 1 == len(debs):
            print(f"{i + 1}/{len(debs)} packages, {sum(per_lang.values())} pairs, "
                  f"{time.time() - t0:.0f} s", flush=True)
    for f in files.values():
        f.close()

    stats = {
        "packages": len(debs),
        "pairs_per_language": dict(per_lang.most_common()),
        "catalogs_per_language": dict(catalogs.most_common()),
        "pairs_per_package": {p: dict(c.most_common()) for p, c in sorted(per_pkg.items())},
        "unreadable": bad,
    }
    (args.out / "extract_stats.json").write_text(json.dumps(stats, ensure_ascii=False, indent=1))
    for code, n in per_lang.most_common():
        print(f"{code}\t{n}")
    if bad:
        print(f"{len(bad)} unreadable catalogs (see extract_stats.json)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
