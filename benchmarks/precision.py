#!/usr/bin/env python3
"""Precision of torchlint's findings on a corpus whose findings were read by hand.

    python benchmarks/precision.py --out DIR [--verdicts benchmarks/learners_verdicts.tsv]

``--out`` holds one JSON report per repository (``benchmarks/learners.py --out DIR``). The
verdicts file has one line per finding read: ``repo, path, cell, line, rule, verdict
(true|debatable|false), reason`` (tab-separated; ``cell`` empty outside notebooks). A finding
of the report is matched to a verdict by repo, path, cell, line and rule. Prints, per rule and
for notebooks and ``.py`` files apart, the findings read as true, debatable and false, the
share true (of those read), and how many findings have no verdict yet (listed with
``--unread``: read them, add their lines, run again). Packages (the library corpus, the
review packages of ``benchmarks/review_packages.sh``) work the same way: one report per
package, named for its folder (``torchlint check --format json <root>/<package> >
OUT/<package>.json``), and verdicts of 6 fields (no cell): ``--verdicts
benchmarks/review_verdicts.tsv``. ``--lost BASE`` lists the findings with
a verdict that a base run's reports (``BASE``) have and ``--out`` lacks, by verdict: the true
ones a change lost are recall it gave up.
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
VERDICTS = ("true", "debatable", "false")


def read_verdicts(path: Path) -> dict[tuple, tuple[str, str]]:
    found = {}
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        parts = line.split("\t")
        if len(parts) >= 2 and parts[1].endswith(".py") and len(parts) >= 6 and parts[4] in VERDICTS:
            parts = [*parts[:2], "", *parts[2:]]  # a package's verdicts (library, review): no cell
        if len(parts) < 7:
            sys.exit(f"{path}:{n}: expected 7 tab-separated fields (6 for a package's .py files)")
        repo, file, cell, row, rule, verdict, reason = parts[:7]
        if verdict not in VERDICTS:
            sys.exit(f"{path}:{n}: verdict {verdict!r} is not true, debatable or false")
        found[(repo, file, cell.strip(), row.strip(), rule)] = (verdict, reason)
    return found


def findings(out: Path):
    for report in sorted(out.glob("*.json")):
        text = report.read_text(encoding="utf-8")
        for f in json.loads(text) if text.strip() else []:
            cell = str(f.get("cell", "")) if f.get("cell") is not None else ""
            # a package linted by its folder (``torchlint check --format json <root>/<package>``)
            # names absolute paths: relative to the package's folder, as its verdicts do
            path = f["path"].split(f"/{report.stem}/", 1)[1] if f"/{report.stem}/" in f["path"] else f["path"]
            yield report.stem, f, (report.stem, path, cell, str(f["line"]), f["rule"])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, required=True, help="the JSON reports, one per repository")
    ap.add_argument("--verdicts", type=Path, default=HERE / "learners_verdicts.tsv")
    ap.add_argument("--skip", action="append", default=[], metavar="RULE[:nb|:py]",
                    help="leave a rule out of the tables (TL004:nb: TL004 in notebooks)")
    ap.add_argument("--unread", action="store_true", help="list the findings with no verdict")
    ap.add_argument("--lost", type=Path, metavar="BASE", help="list the read findings BASE's reports have and --out's lack")
    args = ap.parse_args()
    verdicts = read_verdicts(args.verdicts)
    table: dict[tuple[str, str], collections.Counter] = collections.defaultdict(collections.Counter)
    unread = []
    for repo, f, key in findings(args.out):
        kind = "nb" if f["path"].endswith(".ipynb") else "py"
        if f["rule"] in args.skip or f"{f['rule']}:{kind}" in args.skip:
            continue
        verdict = verdicts.get(key, (None, ""))[0]
        table[(f["rule"], kind)][verdict or "unread"] += 1
        if verdict is None:
            unread.append(f"{repo}\t{f['path']}\t{key[2]}\t{f['line']}\t{f['rule']}\t{f['message'][:100]}")
    rows, totals = [], {k: collections.Counter() for k in ("nb", "py", "all")}
    for rule in sorted({r for r, _ in table}):
        for kind in ("nb", "py"):
            c = table.get((rule, kind))
            if c:
                rows.append((rule, kind, c))
                totals[kind].update(c)
                totals["all"].update(c)
    print(f"{'rule':6} {'in':3} {'true':>5} {'deb.':>5} {'false':>5} {'unread':>6} {'% true':>7} {'% true+deb.':>11}")
    for rule, kind, c in rows + [("all", k, totals[k]) for k in ("nb", "py", "all")]:
        read = c["true"] + c["debatable"] + c["false"]
        share = f"{100 * c['true'] / read:6.1f}%" if read else "      -"
        lenient = f"{100 * (c['true'] + c['debatable']) / read:10.1f}%" if read else "          -"
        print(f"{rule:6} {kind:3} {c['true']:5} {c['debatable']:5} {c['false']:5} {c['unread']:6} {share} {lenient}")
    if args.unread:
        print("\nfindings with no verdict:")
        print("\n".join(unread))
    if args.lost:
        now = {key for _, _, key in findings(args.out)}
        lost = [(verdicts[key][0], key, f["message"][:100]) for _, f, key in findings(args.lost)
                if key not in now and key in verdicts]
        print(f"\nread findings of {args.lost} no longer reported: "
              + ", ".join(f"{n} {v}" for v, n in sorted(collections.Counter(v for v, _, _ in lost).items())))
        for verdict, key, message in sorted(lost):
            print(f"{verdict}\t" + "\t".join(key) + f"\t{message}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
