#!/usr/bin/env python3
"""Findings of this checkout against another commit's, file by file.

    python benchmarks/findings_diff.py --base 032bcc8                 # the corpus, each project alone
    python benchmarks/findings_diff.py --base HEAD~3 DIR [DIR ...]    # other projects
    python benchmarks/findings_diff.py --base HEAD --fix DIR          # the fixed files too

Each directory is linted on its own (``--no-cache --isolated --format json``) by this
checkout and by ``--base`` (a ``git worktree`` of that commit in a temporary directory, run
from source with ``PYTHONPATH``), then findings are compared as (path, line, column, rule,
message). With ``--fix``, each directory is copied twice, fixed with ``--fix
--unsafe-fixes`` by each side, and the fixed files compared byte for byte. Prints one line
per project and every difference; exits 1 when anything differs. The corpus comes from
``../shared/corpus/fetch.sh`` (or ``$TORCHLINT_CORPUS_SRC``). Nothing is written to the
projects.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def corpus_projects() -> list[Path]:
    src = os.environ.get("TORCHLINT_CORPUS_SRC")
    if not src:
        src = subprocess.run(["bash", str(REPO.parent / "shared" / "corpus" / "fetch.sh")], capture_output=True,
                             text=True, check=True).stdout.strip()
    return sorted(p for p in Path(src).iterdir() if p.is_dir())


def lint(source: Path, project: Path, jobs: int) -> list[tuple]:
    env = {**os.environ, "PYTHONPATH": str(source)}
    out = subprocess.run([sys.executable, "-m", "torchlint", "check", "--no-cache", "--isolated", "--format", "json",
                          "-j", str(jobs), "."], cwd=project, env=env, capture_output=True, text=True)
    if out.returncode not in (0, 1):
        raise SystemExit(f"{source}: torchlint failed on {project} (exit {out.returncode}):\n{out.stderr[-2000:]}")
    return sorted((f["path"], f["line"], f["column"], f["rule"], f["message"]) for f in json.loads(out.stdout))


def fixed(source: Path, project: Path, work: Path) -> dict[str, bytes]:
    copy = work / project.name
    shutil.copytree(project, copy)
    env = {**os.environ, "PYTHONPATH": str(source)}
    subprocess.run([sys.executable, "-m", "torchlint", "check", "--no-cache", "--isolated", "--fix", "--unsafe-fixes",
                    "-q", "."], cwd=copy, env=env, capture_output=True)
    return {p.relative_to(copy).as_posix(): p.read_bytes() for p in sorted(copy.rglob("*")) if p.is_file()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", required=True, help="the commit to compare with")
    parser.add_argument("--fix", action="store_true", help="compare the fixed files too")
    parser.add_argument("-j", "--jobs", type=int, default=len(os.sched_getaffinity(0)))
    parser.add_argument("projects", nargs="*", type=Path)
    args = parser.parse_args()
    projects = [p.resolve() for p in args.projects] or corpus_projects()
    differ = False
    with tempfile.TemporaryDirectory(prefix="torchlint-base-") as tmp:
        base = Path(tmp) / "base"
        subprocess.run(["git", "worktree", "add", "-q", "--detach", str(base), args.base], cwd=REPO, check=True)
        try:
            total = 0
            for project in projects:
                ours, theirs = lint(REPO, project, args.jobs), lint(base, project, args.jobs)
                total += len(ours)
                gained, lost = sorted(set(ours) - set(theirs)), sorted(set(theirs) - set(ours))
                line = f"{project.name:28} {len(theirs):6} -> {len(ours):6} findings"
                if args.fix:
                    a, b = fixed(REPO, project, Path(tmp) / "ours"), fixed(base, project, Path(tmp) / "theirs")
                    changed = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
                    line += f"; fixed files differing: {len(changed)}"
                    differ |= bool(changed)
                    for name in changed:
                        print(f"  fixed differently: {name}")
                print(line + ("" if not (gained or lost) else f"  (+{len(gained)} -{len(lost)})"))
                for f in gained:
                    print("  +", *f)
                for f in lost:
                    print("  -", *f)
                differ |= bool(gained or lost)
            print(f"{'all':28} {total:6} findings now; {'DIFFERENT' if differ else 'identical'}")
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(base)], cwd=REPO, check=False)
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
