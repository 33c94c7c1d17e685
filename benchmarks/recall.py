#!/usr/bin/env python3
"""Recall on the cases adapted from public bug reports (``tests/rules/reports``): per rule,
the bugs found, the look-alikes reported, and (``--misses``) which cases, by source.

    python benchmarks/recall.py [--misses] [CODE ...]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.rules.reports import findings, reports_of  # noqa: E402
from torchlint.rule import all_rules  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("codes", nargs="*", help="only these rules")
    ap.add_argument("--misses", action="store_true", help="list the missed bugs and reported look-alikes")
    args = ap.parse_args()
    print(f"{'rule':6} {'bugs':>5} {'found':>6} {'recall':>7} {'look-alikes':>12} {'reported':>9}")
    total = [0, 0, 0, 0]
    for rule in all_rules():
        cases = reports_of(rule)
        if cases is None or args.codes and rule.code not in args.codes:
            continue
        bugs, lookalikes = cases
        missed = [b for b in bugs if not findings(rule, b)]
        reported = [l for l in lookalikes if findings(rule, l)]
        found = len(bugs) - len(missed)
        print(f"{rule.code:6} {len(bugs):5} {found:6} {found / len(bugs):7.2f} {len(lookalikes):12} {len(reported):9}")
        for n, v in enumerate((len(bugs), found, len(lookalikes), len(reported))):
            total[n] += v
        if args.misses:
            for b in missed:
                print(f"    missed:   {b.source()}")
            for l in reported:
                print(f"    reported: {l.source()}")
    if total[0]:
        print(f"{'all':6} {total[0]:5} {total[1]:6} {total[1] / total[0]:7.2f} {total[2]:12} {total[3]:9}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
