#!/usr/bin/env python3
"""Lists the Debian packages whose catalogs the demo model was trained on: every package in
the packed corpus's training split (the model's languages), with its number of pairs, for
the model's README. The translations in those pairs come from the packages' gettext
catalogs, distributed under the packages' licences (mostly GPL/LGPL).

    python3 tools/train/packages_used.py > resources/models/mtdesk-demo/PACKAGES.tsv
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from data import DEFAULT_CORPUS, DEFAULT_LANGS, read_splits  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--langs", default=",".join(DEFAULT_LANGS))
    args = ap.parse_args()
    langs = args.langs.split(",")
    splits = read_splits(args.corpus, ("train", "test"), langs)
    train = Counter(r.package for r in splits["train"])
    test = sorted({r.package for r in splits["test"]})
    print("# Debian 12 packages whose gettext catalogs (.mo) the mtdesk demo model was trained on,")
    print(f"# with the number of training pairs from each (languages: {', '.join(langs)}).")
    print(f"# {len(train)} packages, {sum(train.values())} pairs. Held out for testing, never "
          f"trained on: {', '.join(test)}.")
    print("# package\tpairs")
    for pkg, n in sorted(train.items()):
        print(f"{pkg}\t{n}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
