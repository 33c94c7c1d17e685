"""``torchlint run --synthetic-data`` on real training scripts (issue 44): each must dry-run in
under 30 s on CPU and write nothing outside the run's temporary directory.

The scripts are not in this repository (third-party code is never committed); fetch them:

    git clone https://github.com/pytorch/examples  SRC/examples
    git clone https://github.com/karpathy/nanoGPT   SRC/nanoGPT
    (cd SRC/nanoGPT/data/shakespeare_char && python prepare.py)   # or any train.bin/val.bin/meta.pkl

and run, with a Python that has torch, torchvision and numpy (and torchlint installed):

    python benchmarks/run_scripts.py --src SRC [--python PATH]

For each script: the wall time of the whole ``torchlint run`` (start, torch import, lint, run),
the run's own time and summary, its findings (run findings and confirmed static ones), and
every file under the script's repository that appeared or changed during the run, and whatever
is left in torchlint's own temporary directory (a private ``TMPDIR``) after it (there must be
none: the run's directory is removed).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# (repository, directory, script, the script's arguments, torchlint run options)
SCRIPTS = [
    ("examples", "mnist", "main.py", ["--epochs", "2"], []),
    ("examples", "vae", "main.py", ["--epochs", "2"], []),
    ("examples", "mnist_rnn", "main.py", ["--epochs", "2", "--accel"], []),  # --accel: the GPU, as users run it
    ("examples", "dcgan", "main.py", ["--dataset", "fake", "--niter", "2", "--accel"], []),
    ("examples", "word_language_model", "main.py", ["--epochs", "2", "--accel"], []),
    ("examples", "regression", "main.py", [], []),
    ("nanoGPT", "", "train.py", ["config/train_shakespeare_char.py", "--eval_iters=5",
                                 "--log_interval=1"], []),
]
LIMIT_SECONDS = 30.0


def snapshot(root: Path) -> dict[str, tuple[float, int]]:
    files = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        for name in filenames:
            path = os.path.join(dirpath, name)
            try:
                st = os.lstat(path)
            except OSError:
                continue
            files[path] = (st.st_mtime, st.st_size)
    return files




def run_one(python: str, src: Path, entry: tuple) -> dict:
    repo, directory, script, argv, options = entry
    cwd = src / repo / directory
    if not (cwd / script).is_file():
        return {"script": f"{repo}/{directory}/{script}", "missing": True}
    before = snapshot(src / repo)
    command = [python, "-m", "torchlint", "run", "--isolated", "-q", "--no-cache", "--format", "json",
               "--synthetic-data", *options, script, "--", *argv]
    private = Path(tempfile.mkdtemp(prefix="run-scripts-"))  # torchlint's TMPDIR: what is left in it
    started = time.perf_counter()
    proc = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "TMPDIR": str(private)})
    wall = time.perf_counter() - started
    after = snapshot(src / repo)
    left = sorted(str(p) for p in private.rglob("*"))
    shutil.rmtree(private, ignore_errors=True)
    changed = sorted(p for p in set(before) | set(after) if before.get(p) != after.get(p))
    try:
        findings = json.loads(proc.stdout or "[]")
    except ValueError:
        findings = []
    summary = [line for line in proc.stderr.splitlines() if line.startswith("torchlint: run:")]
    return {"script": f"{repo}/{directory}/{script}".replace("//", "/").replace("/./", "/"), "wall": wall, "summary": summary,
            "exit": proc.returncode, "run_findings": [f for f in findings if "(found by the dry run)" in f["message"]],
            "confirmed": [f for f in findings if f.get("confirmed")], "changed": changed,
            "temp_new": left, "stderr": proc.stderr[-2000:]}


def learners_scripts(src: Path, most: int = 40) -> list[tuple]:
    """The learners' corpus scripts that train on a torchvision dataset through a DataLoader
    (``benchmarks/learners.py`` builds the corpus): run with ``--synthetic-data``."""
    found = []
    for path in sorted(src.rglob("*.py")):
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if ".step()" in text and "DataLoader" in text and ("torchvision.datasets" in text or "datasets.MNIST" in text
                                                          or "datasets.CIFAR" in text or "FashionMNIST" in text):
            rel = path.relative_to(src)
            found.append((rel.parts[0], str(Path(*rel.parts[1:-1])), rel.name, [], []))
    return found[:most]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--src", type=Path, required=True, help="where examples/ and nanoGPT/ were cloned")
    parser.add_argument("--python", default=sys.executable, help="the Python that runs torchlint")
    parser.add_argument("--learners", action="store_true",
                        help="--src is the learners' corpus: run its scripts that train on a torchvision dataset")
    args = parser.parse_args()
    if args.learners:
        SCRIPTS[:] = learners_scripts(args.src)
    failed = 0
    print(f"{'script':42} {'wall s':>7}  {'ok':3} run")
    for entry in SCRIPTS:
        row = run_one(args.python, args.src, entry)
        if row.get("missing"):
            print(f"{row['script']:42} {'-':>7}  --  not found under --src")
            continue
        ok = row["wall"] < LIMIT_SECONDS and not row["changed"] and not row["temp_new"] and row["exit"] in (0, 1)
        failed += not ok
        print(f"{row['script']:42} {row['wall']:7.1f}  {'yes' if ok else 'NO':3} "
              + (row["summary"][0].split(": ", 2)[-1] if row["summary"] else row["stderr"][-300:]))
        for line in row["summary"][1:]:
            print(f"{'':55}{line.split(': ', 2)[-1]}")
        for f in row["run_findings"] + [f for f in row["confirmed"] if f not in row["run_findings"]]:
            mark = "confirmed" if f.get("confirmed") else "run"
            print(f"{'':55}{mark}: {f['path']}:{f['line']} {f['rule']} {f['message'][:110]}")
        for path in row["changed"] + row["temp_new"]:
            print(f"{'':55}WRITTEN OUTSIDE THE RUN'S DIRECTORY: {path}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
