#!/usr/bin/env python3
"""Lint a "learners' corpus" (course material, tutorials, student projects, notebook
collections, one-file training scripts) with torchlint, one repository at a time.

    learners.py [--src DIR] [--out DIR]                 lint every <owner>__<name>/ under --src
    learners.py --extract MIRROR_ROOT [--src DIR]       first rebuild --src from fetched snapshots
    learners.py --time-files ...                         also time every file on its own

The corpus list is learners_corpus.tsv (next to this script, or --corpus):
    owner/name <TAB> commit <TAB> kind <TAB> notebooks using torch <TAB> .py using torch <TAB> description
--extract looks for MIRROR_ROOT/<owner>+<name>/... holding a git directory that has that commit,
and unpacks `git archive <commit>` restricted to the .py/.ipynb files into --src/<owner>__<name>/.

Standard library only; needs `git` (for --extract) and `torchlint` on PATH (or --torchlint).
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
KEEP = (".py", ".ipynb")


# ---------------------------------------------------------------- corpus list
def read_corpus(tsv: Path) -> list[dict]:
    rows = []
    for n, line in enumerate(tsv.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split("\t")
        if len(parts) < 6:
            sys.exit(f"{tsv}:{n}: expected 6 tab-separated fields, got {len(parts)}")
        repo, sha, kind, nbs, pys, desc = parts[:6]
        rows.append(dict(repo=repo, sha=sha, kind=kind, notebooks=int(nbs), py=int(pys), desc=desc))
    return rows


def dirname_for(repo: str) -> str:
    return repo.replace("/", "__")


# ---------------------------------------------------------------- extraction
def git(gitdir: Path, *args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "--git-dir", str(gitdir), *args], **kw)


def find_gitdir(mirror_root: Path, repo: str, sha: str) -> Path | None:
    """The git directory under MIRROR_ROOT/<owner>+<name>/ that holds commit `sha`."""
    base = mirror_root / repo.replace("/", "+")
    if not base.is_dir():
        return None
    candidates = []
    for dirpath, dirnames, filenames in os.walk(base):
        if "HEAD" in filenames and "objects" in dirnames:
            candidates.append(Path(dirpath))
            dirnames[:] = []  # do not descend into a git dir
        elif len(Path(dirpath).relative_to(base).parts) >= 3:
            dirnames[:] = []
    for cand in candidates:
        if git(cand, "cat-file", "-e", f"{sha}^{{commit}}", capture_output=True).returncode == 0:
            return cand
    return None


def wanted_paths(gitdir: Path, sha: str) -> tuple[list[str], list[str]]:
    """(.py/.ipynb blob paths present in the snapshot, those whose blob is missing)."""
    out = git(gitdir, "ls-tree", "-r", "-z", sha, capture_output=True, check=True).stdout
    ents = []
    for ent in out.split(b"\0"):
        if not ent:
            continue
        meta, path = ent.split(b"\t", 1)
        mode, typ, obj = meta.split()
        name = path.decode("utf-8", "surrogateescape")
        if typ == b"blob" and mode != b"120000" and name.endswith(KEEP):
            ents.append((name, obj.decode()))
    if not ents:
        return [], []
    check = git(gitdir, "cat-file", "--batch-check", input="".join(o + "\n" for _, o in ents),
                capture_output=True, text=True, check=True).stdout.splitlines()
    present, missing = [], []
    for (name, _), res in zip(ents, check):
        (missing if res.endswith(" missing") else present).append(name)
    return present, missing


def extract_one(gitdir: Path, sha: str, dest: Path) -> tuple[int, int]:
    present, missing = wanted_paths(gitdir, sha)
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    chunk = 500
    for i in range(0, len(present), chunk):
        specs = [":(literal)" + p for p in present[i:i + chunk]]
        # git (2.39) still prints "invalid object" for absent blobs outside the pathspec; keep that
        # noise unless the archive itself fails
        with tempfile.TemporaryFile() as err:
            arch = subprocess.Popen(["git", "--git-dir", str(gitdir), "archive", "--format=tar", sha, "--", *specs],
                                    stdout=subprocess.PIPE, stderr=err)
            tar = subprocess.run(["tar", "-x", "-C", str(dest)], stdin=arch.stdout)
            arch.stdout.close()
            if arch.wait() != 0 or tar.returncode != 0:
                err.seek(0)
                sys.stderr.write(err.read().decode(errors="replace"))
                raise RuntimeError(f"git archive {sha} | tar failed for {gitdir}")
    # belt and braces: keep only .py/.ipynb
    for p in sorted(dest.rglob("*"), reverse=True):
        if p.is_symlink() or (p.is_file() and not p.name.endswith(KEEP)):
            p.unlink()
        elif p.is_dir() and not any(p.iterdir()):
            p.rmdir()
    dest.mkdir(exist_ok=True)
    return len(present), len(missing)


def extract(rows: list[dict], mirror_root: Path, src: Path) -> None:
    src.mkdir(parents=True, exist_ok=True)
    for r in rows:
        gd = find_gitdir(mirror_root, r["repo"], r["sha"])
        if gd is None:
            print(f"extract: {r['repo']}: no git dir with {r['sha']} under {mirror_root}", file=sys.stderr)
            continue
        n, miss = extract_one(gd, r["sha"], src / dirname_for(r["repo"]))
        extra = f" ({miss} absent from the snapshot)" if miss else ""
        print(f"extract: {r['repo']:55s} {n:5d} files{extra}", file=sys.stderr)


# ---------------------------------------------------------------- linting
def is_nb(path: str) -> bool:
    return path.endswith(".ipynb")


def count_files(d: Path) -> tuple[int, int]:
    nb = py = 0
    for p in d.rglob("*"):
        if p.is_file():
            nb += p.name.endswith(".ipynb")
            py += p.name.endswith(".py")
    return nb, py


def lint_repo(torchlint: list[str], repo_dir: Path, out_dir: Path, timeout: float) -> dict:
    cmd = [*torchlint, "check", "--no-cache", "--isolated", "--format", "json", "-j", "2", "."]
    t0 = time.monotonic()
    try:
        proc = subprocess.run(cmd, cwd=repo_dir, capture_output=True, text=True, timeout=timeout)
        rc, stdout, stderr = proc.returncode, proc.stdout, proc.stderr
    except subprocess.TimeoutExpired as exc:
        rc, stdout, stderr = "timeout", exc.stdout or "", (exc.stderr or "")
        stdout = stdout.decode() if isinstance(stdout, bytes) else stdout
        stderr = stderr.decode() if isinstance(stderr, bytes) else stderr
    secs = time.monotonic() - t0
    name = repo_dir.name
    (out_dir / f"{name}.json").write_text(stdout, encoding="utf-8")
    if stderr.strip():
        (out_dir / f"{name}.stderr.txt").write_text(stderr, encoding="utf-8")
    try:
        findings = json.loads(stdout) if stdout.strip() else []
        bad_json = None
    except json.JSONDecodeError as exc:
        findings, bad_json = [], str(exc)
    if not stdout.strip() and rc != 0:
        bad_json = "no JSON on stdout"
    return dict(name=name, rc=rc, secs=secs, findings=findings, stderr=stderr, bad_json=bad_json)


def time_files(torchlint: list[str], repo_dir: Path, timeout: float) -> list[tuple[float, str, object]]:
    res = []
    for p in sorted(repo_dir.rglob("*")):
        if not (p.is_file() and p.name.endswith(KEEP)):
            continue
        rel = str(p.relative_to(repo_dir))
        t0 = time.monotonic()
        try:
            proc = subprocess.run([*torchlint, "check", "--no-cache", "--isolated", "--format", "json", rel],
                                  cwd=repo_dir, capture_output=True, timeout=timeout)
            rc = proc.returncode
            if proc.stderr.strip() or (rc != 0 and not proc.stdout.strip()):
                rc = f"{rc} ({proc.stderr.decode(errors='replace').strip().splitlines()[-1:] or 'no output'})"
        except subprocess.TimeoutExpired:
            rc = "timeout"
        res.append((time.monotonic() - t0, rel, rc))
    return res


def table(headers: list[str], rows: list[list], out) -> None:
    cells = [[str(c) for c in headers]] + [[str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    right = [i > 0 and all(r[i].replace(".", "").replace("-", "").isdigit() or r[i] == "" for r in cells[1:])
             for i in range(len(headers))]
    for k, r in enumerate(cells):
        print("  ".join(c.rjust(w) if right[i] else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths))).rstrip(),
              file=out)
        if k == 0:
            print("  ".join("-" * w for w in widths), file=out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--src", type=Path, default=Path("~/.cache/torchlint-learners/src").expanduser(),
                    help="folder of <owner>__<name>/ repository trees (default: %(default)s)")
    ap.add_argument("--out", type=Path, default=Path("~/.cache/torchlint-learners/out").expanduser(),
                    help="where each repository's JSON report goes (default: %(default)s)")
    ap.add_argument("--corpus", type=Path, default=HERE / "learners_corpus.tsv",
                    help="the corpus list (default: %(default)s)")
    ap.add_argument("--extract", metavar="MIRROR_ROOT", type=Path,
                    help="first recreate --src from the git snapshots under MIRROR_ROOT")
    ap.add_argument("--extract-only", action="store_true", help="with --extract, stop after extracting")
    ap.add_argument("--torchlint", default="torchlint", help="torchlint command (default: %(default)s)")
    ap.add_argument("--repos", help="comma-separated subset of repository folder names or owner/name")
    ap.add_argument("--timeout", type=float, default=900, help="seconds per repository (default: %(default)s)")
    ap.add_argument("--time-files", action="store_true",
                    help="also lint each file on its own and list the slowest ones")
    args = ap.parse_args()

    rows = read_corpus(args.corpus) if args.corpus.exists() else []
    if args.extract:
        if not rows:
            sys.exit(f"no corpus list at {args.corpus}")
        extract(rows, args.extract.expanduser(), args.src)
        if args.extract_only:
            return 0
    if not args.src.is_dir():
        sys.exit(f"no source folder {args.src}; use --extract MIRROR_ROOT")
    args.out.mkdir(parents=True, exist_ok=True)
    kinds = {dirname_for(r["repo"]): r["kind"] for r in rows}
    repo_dirs = sorted((d for d in args.src.iterdir() if d.is_dir() and not d.name.startswith(".")), key=lambda d: d.name.lower())
    if args.repos:
        want = {dirname_for(x.strip()) for x in args.repos.split(",")}
        repo_dirs = [d for d in repo_dirs if d.name in want]
    torchlint = args.torchlint.split()
    vproc = subprocess.run([*torchlint, "--version"], capture_output=True, text=True)
    if vproc.returncode != 0:
        sys.exit(f"`{args.torchlint} --version` failed (rc={vproc.returncode}):\n{vproc.stderr.strip()}")
    version = vproc.stdout.strip()

    out = sys.stdout
    print(f"{version}; {len(repo_dirs)} repositories under {args.src}; "
          f"command: torchlint check --no-cache --isolated --format json -j 2 . (cwd = each repository)", file=out)
    per_rule = collections.defaultdict(lambda: collections.Counter())
    rule_names, rule_files = {}, collections.defaultdict(set)
    repo_rows, problems = [], []
    tot = collections.Counter()
    for d in repo_dirs:
        nb_files, py_files = count_files(d)
        r = lint_repo(torchlint, d, args.out, args.timeout)
        nb_f = sum(is_nb(f["path"]) for f in r["findings"])
        py_f = len(r["findings"]) - nb_f
        files_hit = {f["path"] for f in r["findings"]}
        for f in r["findings"]:
            kind = "nb" if is_nb(f["path"]) else "py"
            per_rule[f["rule"]][kind] += 1
            rule_names[f["rule"]] = f.get("name", "")
            rule_files[f["rule"]].add((d.name, f["path"]))
        repo_rule_counts = collections.Counter(f["rule"] for f in r["findings"])
        for rule in repo_rule_counts:
            per_rule[rule]["repos"] += 1
        top = ", ".join(f"{k}:{v}" for k, v in repo_rule_counts.most_common(3))
        repo_rows.append([d.name, kinds.get(d.name, "?"), nb_files, py_files, nb_f, py_f, len(files_hit),
                          r["rc"], f"{r['secs']:.1f}", top])
        tot.update(nb_files=nb_files, py_files=py_files, nb_f=nb_f, py_f=py_f, files_hit=len(files_hit))
        tot["secs"] += r["secs"]
        err_lines = [ln for ln in r["stderr"].splitlines() if ln.strip()]
        if r["rc"] not in (0, 1) or err_lines or r["bad_json"]:
            problems.append((d.name, r["rc"], r["bad_json"], err_lines))
        print(f"  linted {d.name}: rc={r['rc']} {len(r['findings'])} findings in {r['secs']:.1f}s",
              file=sys.stderr)

    print("\nFindings per rule (nb = in notebooks, py = in .py files; repos = repositories with any):", file=out)
    rule_rows = []
    for rule in sorted(per_rule):
        c = per_rule[rule]
        rule_rows.append([rule, rule_names.get(rule, ""), c["nb"] + c["py"], c["nb"], c["py"],
                          len(rule_files[rule]), c["repos"]])
    rule_rows.append(["total", "", tot["nb_f"] + tot["py_f"], tot["nb_f"], tot["py_f"], tot["files_hit"], ""])
    table(["rule", "name", "total", "nb", "py", "files", "repos"], rule_rows, out)

    print("\nPer repository (files = .ipynb/.py present; findings split nb/py; hit = files with findings):",
          file=out)
    repo_rows.append(["total", "", tot["nb_files"], tot["py_files"], tot["nb_f"], tot["py_f"], tot["files_hit"],
                      "", f"{tot['secs']:.1f}", ""])
    table(["repo", "kind", "nb", "py", "nb_find", "py_find", "hit", "rc", "secs", "top rules"], repo_rows, out)

    print("\nErrors / stderr output:", file=out)
    if not problems:
        print("  none (every run exited 0 or 1 with valid JSON and an empty stderr)", file=out)
    for name, rc, bad_json, err_lines in problems:
        print(f"  {name}: rc={rc}" + (f", invalid JSON: {bad_json}" if bad_json else ""), file=out)
        for ln in err_lines[:20]:
            print(f"    {ln}", file=out)
        if len(err_lines) > 20:
            print(f"    ... {len(err_lines) - 20} more lines in {args.out / (name + '.stderr.txt')}", file=out)

    tl000 = [(n, p) for (n, p) in sorted(rule_files.get("TL000", set()))]
    if tl000:
        print(f"\nTL000 (file not parsed) in {len(tl000)} files:", file=out)
        for n, p in tl000[:40]:
            print(f"  {n}/{p}", file=out)

    if args.time_files:
        print("\nSlowest files, each linted on its own (torchlint check --no-cache --isolated FILE):", file=out)
        timings = []
        for d in repo_dirs:
            timings += [(s, f"{d.name}/{rel}", rc) for s, rel, rc in time_files(torchlint, d, args.timeout)]
        timings.sort(reverse=True)
        table(["secs", "file", "rc"], [[f"{s:.2f}", f, rc] for s, f, rc in timings[:15]], out)
        odd = [(s, f, rc) for s, f, rc in timings if rc not in (0, 1)]
        if odd:
            print("\nFiles whose own run exited neither 0 nor 1:", file=out)
            for s, f, rc in odd:
                print(f"  rc={rc} {f}", file=out)
    print(f"\nJSON reports in {args.out}", file=out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
