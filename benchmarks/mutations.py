#!/usr/bin/env python3
"""Mutation recall: plant each rule's bug in real training scripts and see whether the rule finds it.

    python benchmarks/mutations.py [--learners DIR] [--library DIR] [--scripts benchmarks/mutation_scripts.tsv]
                                   [--rules TL001,TL002] [--per-file 2] [--show-misses]

Each script (a real training script of the learners' corpus, ``--learners`` holding
``<owner>__<name>/`` folders as ``benchmarks/learners.py`` builds them, or of the library
corpus, ``--library``, as ``../shared/corpus/fetch.sh`` unpacks it; the list is
``mutation_scripts.tsv``: corpus, folder, path) is copied alone into a temporary git repository and linted with the
default rules (``check --isolated``). Then each operator below makes one minimal, realistic
edit at one site (at most ``--per-file`` sites per script and operator) -- delete
``zero_grad()``, drop ``.item()``, remove ``with torch.no_grad():``, drop ``device=``, swap
``log_softmax`` for ``softmax``, make a ``ModuleList`` a plain list, ... -- and the script is
linted again. A mutant is *found* when a finding of the operator's rule appears that the
unedited script did not have: at the edited line (or, for an operator that deletes a line,
where it says: the step of the loop, anywhere in the file); *elsewhere* counts findings of
that rule that appear at another line, *other* the findings of other rules that appear or go.

Prints per rule: mutants, found at the line, found anywhere, recall, and with
``--show-misses`` each missed mutant (script, line, edit). Standard library and torchlint only.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import io
import json
import re
import shutil
import subprocess
import sys
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))


@dataclass
class Mutant:
    rule: str
    text: str
    line: int | None  # where the finding is expected; None: anywhere in the file
    edit: str  # what was done, for the report


Operator = Callable[[list[str]], Iterator[Mutant]]
OPERATORS: list[tuple[str, Operator]] = []


def operator(rule: str):
    def register(fn: Operator) -> Operator:
        OPERATORS.append((rule, fn))
        return fn
    return register


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _replace(lines: list[str], i: int, new: str | None) -> str:
    out = list(lines)
    if new is None:
        # a deleted statement: keep the block valid with `pass` at its indent
        out[i] = " " * _indent(lines[i]) + "pass"
    else:
        out[i] = new
    return "\n".join(out) + "\n"


def _sites(lines: list[str], pattern: str) -> Iterator[tuple[int, re.Match]]:
    rx = re.compile(pattern)
    for i, line in enumerate(lines):
        if line.lstrip().startswith("#"):
            continue
        m = rx.search(line)
        if m:
            yield i, m


# -- the operators, one or more per rule ---------------------------------------------------------

@operator("TL001")
def delete_zero_grad(lines):
    for i, _ in _sites(lines, r"^\s*[\w.\[\]]+\.zero_grad\(\s*(set_to_none\s*=\s*\w+)?\s*\)\s*$"):
        step = next((j for j in range(i + 1, min(i + 40, len(lines))) if re.search(r"\.step\(\s*\)", lines[j])), None)
        if step is not None:
            yield Mutant("TL001", _replace(lines, i, None), step + 1, f"deleted `{lines[i].strip()}`")


@operator("TL002")
def drop_item(lines):
    for i, m in _sites(lines, r"(\.append\(|\+=\s*)(\w*loss\w*)\.item\(\)"):
        new = lines[i][:m.start()] + m.group(1) + m.group(2) + lines[i][m.end():]
        yield Mutant("TL002", _replace(lines, i, new), i + 1, f"dropped `.item()` of `{m.group(2)}`")


@operator("TL003")
def remove_no_grad(lines):
    for i, _ in _sites(lines, r"^\s*with torch\.no_grad\(\)\s*:\s*$"):
        indent = _indent(lines[i])
        body = []
        j = i + 1
        while j < len(lines) and (not lines[j].strip() or _indent(lines[j]) > indent):
            body.append(j)
            j += 1
        if not body:
            continue
        out = list(lines)
        out[i] = " " * indent + "if True:"  # keeps every line where it was
        text = "\n".join(out) + "\n"
        first = next(k for k in body if lines[k].strip())
        yield Mutant("TL003", text, None, f"`with torch.no_grad():` at line {i + 1} made `if True:` (body from line {first + 1})")


@operator("TL004")
def inline_lr(lines):
    for i, m in _sites(lines, r"\blr\s*=\s*(args|opt|cfg|config|hparams|opts|FLAGS)\.(\w+)"):
        new = lines[i][:m.start()] + "lr=0.01" + lines[i][m.end():]
        yield Mutant("TL004", _replace(lines, i, new), i + 1, f"`{m.group(0)}` -> `lr=0.01`")


@operator("TL006")
def delete_seed(lines):
    # Only where a missing seed is TL006's bug: a script with an entry point (an ``if __name__``
    # block, or seeding in top-level code), not a library module whose functions take a ``seed``
    # argument, nor a test script (``def test_*`` functions: TL006 skips tests).
    text = "\n".join(lines)
    seeds = [i for i, _ in _sites(lines, r"^\s*torch\.(cuda\.)?manual_seed(_all)?\(")]
    entry = re.search(r"^if __name__ == ", text, re.M) or any(_indent(lines[i]) == 0 for i in seeds)
    if not entry or re.search(r"^def test_", text, re.M):
        return
    if seeds:
        out = list(lines)
        for i in seeds:
            out[i] = " " * _indent(lines[i]) + "pass"
        yield Mutant("TL006", "\n".join(out) + "\n", None, f"deleted torch's seeds (lines {[i + 1 for i in seeds]})")


@operator("TL007")
def modulelist_to_list(lines):
    for i, m in _sites(lines, r"(nn\.)?ModuleList\((\[.*\])\)"):
        new = lines[i][:m.start()] + m.group(2) + lines[i][m.end():]
        yield Mutant("TL007", _replace(lines, i, new), i + 1, "`nn.ModuleList([...])` -> `[...]`")


@operator("TL008")
def drop_training_kw(lines):
    for i, m in _sites(lines, r"F\.dropout\((.*?),\s*training\s*=\s*self\.training\s*\)"):
        new = lines[i][:m.start()] + f"F.dropout({m.group(1)})" + lines[i][m.end():]
        yield Mutant("TL008", _replace(lines, i, new), i + 1, "dropped `training=self.training`")


@operator("TL009")
def log_softmax_to_softmax(lines):
    text = "\n".join(lines)
    if not re.search(r"CrossEntropyLoss|cross_entropy|NLLLoss|nll_loss", text):
        return
    for i, m in _sites(lines, r"\breturn\s+(F\.log_softmax|torch\.log_softmax)\("):
        new = lines[i][:m.start()] + "return F.softmax(" + lines[i][m.end():]
        yield Mutant("TL009", _replace(lines, i, new), None, "`return F.log_softmax(` -> `return F.softmax(`")
    if "CrossEntropyLoss" in text or "cross_entropy" in text:
        for i, m in _sites(lines, r"^(\s*)def forward\(self, (\w+)"):
            j = next((k for k in range(i + 1, len(lines)) if re.match(r"^\s*return\s+\w+\s*$", lines[k])), None)
            if j is None or _indent(lines[j]) <= _indent(lines[i]):
                continue
            value = lines[j].strip()[len("return"):].strip()
            new = " " * _indent(lines[j]) + f"return torch.softmax({value}, dim=1)"
            yield Mutant("TL009", _replace(lines, j, new), None, f"forward returns `torch.softmax({value}, dim=1)`")
            break


@operator("TL010")
def drop_device(lines):
    for i, m in _sites(lines, r"(torch\.(zeros|ones|randn|rand|arange|empty|full|eye)\([^()]*?),\s*device\s*=\s*[\w.]+\)"):
        new = lines[i][:m.start()] + m.group(1) + ")" + lines[i][m.end():]
        yield Mutant("TL010", _replace(lines, i, new), i + 1, "dropped `device=`")


@operator("TL011")
def delete_train_call(lines):
    text = "\n".join(lines)
    if not re.search(r"\.eval\(\)", text) or not re.search(r"Dropout|BatchNorm|dropout", text):
        return
    for i, _ in _sites(lines, r"^\s*[\w.]+\.train\(\)\s*$"):
        yield Mutant("TL011", _replace(lines, i, None), None, f"deleted `{lines[i].strip()}`")


@operator("TL011")
def delete_eval_call(lines):
    text = "\n".join(lines)
    if not re.search(r"Dropout|BatchNorm|dropout", text):
        return
    for i, _ in _sites(lines, r"^\s*[\w.]+\.eval\(\)\s*$"):
        yield Mutant("TL011", _replace(lines, i, None), None, f"deleted `{lines[i].strip()}`")


@operator("TL012")
def delete_unscale(lines):
    for i, _ in _sites(lines, r"^\s*\w+\.unscale_\("):
        clip = next((j for j in range(i + 1, min(i + 10, len(lines))) if "clip_grad" in lines[j]), None)
        if clip is not None:
            yield Mutant("TL012", _replace(lines, i, None), clip + 1, f"deleted `{lines[i].strip()}`")


@operator("TL014")
def delete_set_epoch(lines):
    for i, _ in _sites(lines, r"^\s*[\w.]+\.set_epoch\("):
        yield Mutant("TL014", _replace(lines, i, None), None, f"deleted `{lines[i].strip()}`")


@operator("TL015")
def non_strict(lines):
    for i, m in _sites(lines, r"\.load_state_dict\(([^()]*(\([^()]*\))?[^()]*)\)\s*$"):
        if "strict" in m.group(1):
            continue
        new = lines[i][:m.start()] + f".load_state_dict({m.group(1)}, strict=False)" + lines[i][m.end():]
        yield Mutant("TL015", _replace(lines, i, new), i + 1, "`strict=False` added")


@operator("TL016")
def unsafe_load(lines):
    for i, m in _sites(lines, r"weights_only\s*=\s*True"):
        new = lines[i][:m.start()] + "weights_only=False" + lines[i][m.end():]
        yield Mutant("TL016", _replace(lines, i, new), i + 1, "`weights_only=True` -> `False`")


@operator("TL017")
def unscaled_accumulation(lines):
    for i, m in _sites(lines, r"(\w*loss\w*)\s*=\s*(\w*loss\w*)\s*/\s*[\w.]*(accum|accumulation|grad_acc)\w*"):
        yield Mutant("TL017", _replace(lines, i, None), None, f"deleted `{lines[i].strip()}`")


# -- running ---------------------------------------------------------------------------------------

def findings(repo: Path, rel: str, text: str) -> list[dict]:
    from torchlint.cli import main

    (repo / rel).write_text(text, encoding="utf-8")
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        main(["check", "--isolated", "--no-cache", "--exit-zero", "--format", "json", str(repo / rel)])
    return json.loads(out.getvalue() or "[]")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--learners", type=Path, default=Path.home() / ".cache/torchlint-learners/src")
    ap.add_argument("--library", type=Path, default=Path.home() / ".cache/torchlint-corpus/src")
    ap.add_argument("--scripts", type=Path, default=HERE / "mutation_scripts.tsv")
    ap.add_argument("--rules", default="", help="only these rules (comma-separated)")
    ap.add_argument("--per-file", type=int, default=2, help="at most this many sites per script and operator")
    ap.add_argument("--show-misses", action="store_true")
    args = ap.parse_args()
    warnings.simplefilter("ignore", SyntaxWarning)  # third-party scripts' invalid escapes, compiled below
    wanted = {r.strip() for r in args.rules.split(",") if r.strip()}
    scripts = [line.split("\t")[:3] for line in args.scripts.read_text(encoding="utf-8").splitlines()
               if line.strip() and not line.startswith("#")]
    roots = {"learners": args.learners, "library": args.library}
    table: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    misses: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        for corpus, repo_name, rel in scripts:
            source = roots[corpus] / repo_name / rel
            if not source.is_file():
                print(f"missing: {source}", file=sys.stderr)
                continue
            repo = Path(tmp) / repo_name
            if repo.exists():
                shutil.rmtree(repo)
            (repo / rel).parent.mkdir(parents=True, exist_ok=True)
            subprocess.run(["git", "init", "-q", str(repo)], check=True)
            text = source.read_text(encoding="utf-8", errors="replace")
            lines = text.splitlines()
            before = findings(repo, rel, text)
            seen = collections.Counter((f["rule"], f["line"]) for f in before)
            for rule, op in OPERATORS:
                if wanted and rule not in wanted:
                    continue
                for n, mutant in enumerate(op(lines)):
                    if n >= args.per_file:
                        break
                    try:
                        compile(mutant.text, rel, "exec")
                    except SyntaxError:
                        continue
                    after = findings(repo, rel, mutant.text)
                    now = collections.Counter((f["rule"], f["line"]) for f in after)
                    new = now - seen
                    gone = seen - now
                    ours = [line for (r, line) in new if r == rule]
                    at_line = mutant.line is None and bool(ours) or mutant.line in ours
                    c = table[rule]
                    c["mutants"] += 1
                    c["at line"] += at_line
                    c["anywhere"] += bool(ours)
                    c["other"] += sum(v for (r, _), v in new.items() if r != rule) + sum(gone.values())
                    if not at_line:
                        misses.append(f"{rule}  {repo_name}/{rel}:{mutant.line or '-'}  {mutant.edit}"
                                      + (f"  (found at {sorted(ours)})" if ours else ""))
            (repo / rel).write_text(text, encoding="utf-8")
    print(f"{'rule':6} {'mutants':>8} {'at line':>8} {'anywhere':>9} {'recall':>7} {'other changes':>14}")
    total = collections.Counter()
    for rule in sorted(table):
        c = table[rule]
        total.update(c)
        print(f"{rule:6} {c['mutants']:8} {c['at line']:8} {c['anywhere']:9} "
              f"{c['at line'] / c['mutants']:7.2f} {c['other']:14}")
    if total["mutants"]:
        print(f"{'all':6} {total['mutants']:8} {total['at line']:8} {total['anywhere']:9} "
              f"{total['at line'] / total['mutants']:7.2f} {total['other']:14}")
    if args.show_misses:
        print("\nmissed:")
        print("\n".join(misses))
    return 0


if __name__ == "__main__":
    sys.exit(main())
