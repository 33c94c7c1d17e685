#!/usr/bin/env python3
"""Mutation recall: plant each rule's bug in real training scripts and see whether the rule finds it.

    python benchmarks/mutations.py [--learners DIR] [--library DIR] [--scripts benchmarks/mutation_scripts.tsv]
                                   [--rules TL001,TL002] [--per-file 2] [--show-misses]

Each script (a real training script of the learners' corpus, ``--learners`` holding
``<owner>__<name>/`` folders as ``benchmarks/learners.py`` builds them, or of the library
corpus, ``--library``, as ``../shared/corpus/fetch.sh`` unpacks it; the list is
``mutation_scripts.tsv``: corpus, folder, path) is copied into a temporary git repository, with the
modules of its folder it imports (``from utils import AverageMeter``, ``from model import GPT``:
the project pass sees their classes as it would in the project), and linted with the default
rules (``check --isolated``); only the script is edited and its findings counted. Then each operator below makes one minimal, realistic
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
import functools
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
    # not counted where the unedited script already has a finding of this rule: the edit
    # plants that rule's bug, which the script shows already (nothing new to find)
    unless: str | None = None


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
    for i, m in _sites(lines, r"^\s*([\w.\[\]]+)\.zero_grad\(\s*(set_to_none\s*=\s*\w+)?\s*\)\s*$"):
        # The step expected to be reported: that optimizer's own (``opt.step()``, ``scaler.step(opt)``),
        # after the clearing or, cleared at the end of the iteration, before it; else the next step.
        own = re.compile(rf"(?<![\w.]){re.escape(m.group(1))}\.step\(|\.step\(\s*{re.escape(m.group(1))}\s*\)")
        after = range(i + 1, min(i + 40, len(lines)))
        step = next((j for j in after if own.search(lines[j])), None)
        if step is None:
            step = next((j for j in range(i - 1, max(i - 15, -1), -1) if own.search(lines[j])), None)
        if step is None:
            step = next((j for j in after if re.search(r"\.step\(\s*\)", lines[j])), None)
        if step is not None and not _cleared_just_before(lines, i, m.group(1)):
            yield Mutant("TL001", _replace(lines, i, None), step + 1, f"deleted `{lines[i].strip()}`")


def _cleared_just_before(lines: list[str], i: int, optimizer: str) -> bool:
    """The parameters of ``optimizer`` were already cleared earlier in the same block, with no
    backward or step in between (PyTorch-GAN's clustergan: ``generator.zero_grad()`` and
    ``encoder.zero_grad()`` open the iteration, then ``optimizer_GE.zero_grad()`` over
    ``ichain(generator.parameters(), encoder.parameters())``): deleting the second clearing
    plants no bug."""
    modules = _optimized_names(lines, optimizer)
    for j in range(i - 1, -1, -1):
        line = lines[j]
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if _indent(line) < _indent(lines[i]) or re.search(r"\.(backward|step)\(", line):
            return False
        m = re.match(r"^\s*([\w.]+)\.zero_grad\(", line)
        if m and m.group(1).rsplit(".", 1)[-1] in modules:
            return True
    return False


def _optimized_names(lines: list[str], optimizer: str, depth: int = 0) -> set[str]:
    """The names in the statement building ``optimizer`` (``opt = Adam(net.parameters())``: ``net``),
    and in those building the names it reads (one level: ``ge_chain = ichain(...)``)."""
    text = ""
    for j, line in enumerate(lines):
        if re.match(rf"^\s*{re.escape(optimizer)}\s*=[^=]", line):
            text, k = line.split("=", 1)[1], j
            while text.count("(") > text.count(")") and k + 1 < len(lines):
                k += 1
                text += lines[k]
            break
    names = set(re.findall(r"[A-Za-z_]\w*", text)) - {"parameters", "torch", "optim", "lr", "betas"}
    if depth == 0:
        for name in list(names):
            names |= _optimized_names(lines, name, 1)
    return {n.rsplit(".", 1)[-1] for n in names}


@operator("TL002")
def drop_item(lines):
    # a loss (or any value the script backward-s: d2l's ``l_sum += l.item() * n``) kept by an
    # append, a running sum or an accumulator's update (``meter.update(loss.item(), n)``)
    text = "\n".join(lines)
    for i, m in _sites(lines, r"(\.append\(|\.update\(|\+=\s*)(\w+)\.item\(\)"):
        name = m.group(2)
        if "loss" not in name and not re.search(rf"(?<![\w.]){re.escape(name)}\.backward\(", text):
            continue
        if _without_grad(lines, i):
            continue  # under no_grad/inference_mode the loss has no graph: dropping .item() plants no bug
        if _freed_before(lines, i, name):
            continue
        new = lines[i][:m.start()] + m.group(1) + m.group(2) + lines[i][m.end():]
        yield Mutant("TL002", _replace(lines, i, new), i + 1, f"dropped `.item()` of `{m.group(2)}`")
    # a model output appended every batch or epoch (``preds.append(outputs.detach())``; not before
    # ``.numpy()``, which would raise instead of keeping the graph)
    for i, m in _sites(lines, r"(\.append\()(\w+)\.detach\(\)(?=\)|\.cpu\(\)\))"):
        if _without_grad(lines, i):
            continue
        new = lines[i][:m.start()] + m.group(1) + m.group(2) + lines[i][m.end():]
        yield Mutant("TL002", _replace(lines, i, new), i + 1, f"dropped `.detach()` of `{m.group(2)}`")


def _freed_before(lines: list[str], i: int, name: str) -> bool:
    """Keeping ``name`` at line ``i`` costs next to nothing (TL002's page): it was backward-ed
    before (``name.backward()``, without ``retain_graph``/``create_graph``: the backward freed its
    saved activations), and the store is either once an epoch (less indented than the backward,
    after the loop that ran it) or a running sum reset every N steps (``running_loss = 0.0``
    under an ``if`` in the same loop), so it holds a few graph nodes, not activations."""
    indent = _indent(lines[i])
    backward = None
    for j in range(i - 1, -1, -1):
        if re.match(r"\s*(async\s+)?def\s", lines[j]) and _indent(lines[j]) < indent:
            break
        if re.search(rf"(?<![\w.]){re.escape(name)}\.backward\(", lines[j]):
            backward = j
            break
    if backward is None or re.search(r"retain_graph\s*=\s*True|create_graph\s*=\s*True", lines[backward]):
        return False
    if _indent(lines[backward]) > indent:
        return True  # once an epoch, after the loop whose backward freed it
    total = re.match(r"\s*([\w.\[\]'\"]+)\s*\+=", lines[i])
    if total is None:
        return False
    for j in range(i + 1, len(lines)):
        if lines[j].strip() and not lines[j].lstrip().startswith("#") and _indent(lines[j]) < indent:
            break  # the end of the loop body
        if _indent(lines[j]) > indent and re.match(
                rf"\s*(?:[\w.]+\s*,\s*)*{re.escape(total.group(1))}\s*(?:,\s*[\w.]+\s*)*=\s*[\d.(]", lines[j]):
            return True  # reset every N steps: a window of backward-ed losses
    return False


_NO_GRAD = re.compile(r"^\s*(with\s+torch\.(no_grad\(|inference_mode\(|set_grad_enabled\(\s*False)|"
                      r"@torch\.(no_grad|inference_mode)\b)")


def _without_grad(lines: list[str], i: int) -> bool:
    """Line ``i`` runs in a ``with torch.no_grad():`` / ``inference_mode()`` block, or in a
    function decorated with one (read from the indentation of the lines above)."""
    indent = _indent(lines[i])
    for j in range(i - 1, -1, -1):
        line = lines[j]
        if not line.strip() or line.lstrip().startswith("#") or _indent(line) >= indent:
            continue
        indent = _indent(line)
        if _NO_GRAD.match(line):
            return True
        if line.lstrip().startswith("def "):
            k = j - 1
            while k >= 0 and lines[k].lstrip().startswith("@"):
                if _NO_GRAD.match(lines[k]):
                    return True
                k -= 1
        if indent == 0:
            return False
    return False


def _evaluated_before(lines: list[str], i: int, indent: int) -> set[str]:
    """Names put in eval mode (``k.eval()``, ``k.train(False)``) between the start of the
    function holding line ``i`` (or of the file) and ``i``, and not put back by ``k.train()``."""
    start = 0
    for j in range(i - 1, -1, -1):
        if re.match(r"\s*(async\s+)?def\s", lines[j]) and _indent(lines[j]) < indent:
            start = j
            break
    found: set[str] = set()
    for j in range(start, i + 1):
        for m in re.finditer(r"([\w.]+)\.(eval\(\)|train\(\s*(False)?\s*\))", lines[j]):
            if m.group(2) == "eval()" or m.group(3):
                found.add(m.group(1))
            else:
                found.discard(m.group(1))
    return found


def _inside_no_grad(lines: list[str], i: int, indent: int) -> bool:
    """Line ``i`` lies in the body of an enclosing ``with torch.no_grad():``."""
    for j in range(i - 1, -1, -1):
        if not lines[j].strip() or lines[j].lstrip().startswith("#"):
            continue
        if _indent(lines[j]) < indent:
            if re.match(r"\s*with torch\.no_grad\(\)", lines[j]):
                return True
            indent = _indent(lines[j])
            if indent == 0:
                return False
    return False


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
        # TL003's bug is an evaluation after ``model.eval()``: only a block that forwards a model
        # its function (or the module) put in eval mode before it, not back in training mode.
        evaluated = _evaluated_before(lines, i, indent)
        # A block another ``no_grad`` still covers (nested in one, or holding one) stays protected.
        if any(re.match(r"\s*with torch\.no_grad\(\)", lines[k]) for k in body) or _inside_no_grad(lines, i, indent):
            continue
        if not any(re.search(rf"(?<![\w.]){re.escape(k)}(\.\w+)?\(", lines[k2]) for k in evaluated for k2 in body):
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
    # an attribute assigned a ModuleList (a list inside nn.ModuleDict(dict(h=[...])) or
    # nn.Sequential(...) raises at construction: no silent bug to find)
    for i, m in _sites(lines, r"^\s*self\.\w+\s*=\s*(nn\.)?ModuleList\((\[.*\])\)"):
        new = lines[i][:m.start(1) if m.group(1) else m.start(2) - len("ModuleList(")] + m.group(2) + lines[i][m.end():]
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
        classifiers = _classifiers(text)
        for i, m in _sites(lines, r"^(\s*)def forward\(self, (\w+)"):
            owner = next((re.match(r"^\s*class\s+(\w+)", lines[k]).group(1) for k in range(i - 1, -1, -1)
                          if re.match(r"^\s*class\s+\w+", lines[k]) and _indent(lines[k]) < _indent(lines[i])), None)
            if owner not in classifiers:
                continue  # an encoder, an attention block, a GAN's generator: its output is no loss's input
            if _class_mentions(lines, owner, "softmax"):
                continue  # it applies one already (the bug may be there: the edit would plant nothing new)
            end = next((k for k in range(i + 1, len(lines)) if lines[k].strip() and not lines[k].lstrip().startswith("#")
                        and _indent(lines[k]) <= _indent(lines[i])), len(lines))
            j = next((k for k in range(i + 1, end) if re.match(r"^\s*return\s+\w+\s*$", lines[k])), None)
            if j is None:
                continue  # the forward returns no plain name (a tuple, the loss it computes)
            value = lines[j].strip()[len("return"):].strip()
            new = " " * _indent(lines[j]) + f"return torch.softmax({value}, dim=1)"
            # where softmax output already reaches the loss (TL009's finding on the unedited script:
            # pointer_network's forward returns a buffer filled with softmax attention), the
            # edit plants nothing new
            yield Mutant("TL009", _replace(lines, j, new), None, f"forward returns `torch.softmax({value}, dim=1)`",
                         unless="TL009")
            break


@operator("TL022")
def cross_entropy_to_nll(lines):
    """``CrossEntropyLoss`` swapped for ``NLLLoss`` (``F.cross_entropy`` for ``F.nll_loss``): a
    classifier's logits now reach a loss that wants log-probabilities. Not where the script
    cannot show what reaches the loss: in a function whose model is a parameter nothing in the
    script passes (a library's ``train_ch5(net, ...)``, called from notebooks: NLLLoss is right
    for a net ending in log_softmax), nor the base of a loss class (``class
    MaskedCELoss(nn.CrossEntropyLoss)``: its input is its forward's parameter). Where softmax
    output already reaches the loss (TL009's finding on the unedited script), NLLLoss now gets
    probabilities: TL009's bug, already reported, so the mutant is not counted (``unless``)."""
    for i, m in _sites(lines, r"\b(nn\.|torch\.nn\.)CrossEntropyLoss\("):
        if re.match(r"\s*class\s", lines[i]) or _model_from_elsewhere(lines, i):
            continue
        new = lines[i][:m.start()] + f"{m.group(1)}NLLLoss(" + lines[i][m.end():]
        yield Mutant("TL022", _replace(lines, i, new), None, "`CrossEntropyLoss(` -> `NLLLoss(`", unless="TL009")
    for i, m in _sites(lines, r"\bF\.cross_entropy\("):
        if _model_from_elsewhere(lines, i):
            continue
        new = lines[i][:m.start()] + "F.nll_loss(" + lines[i][m.end():]
        yield Mutant("TL022", _replace(lines, i, new), i + 1, "`F.cross_entropy(` -> `F.nll_loss(`", unless="TL009")


def _model_from_elsewhere(lines: list[str], i: int) -> bool:
    """Line ``i`` is in a function (``def f(net, ...)``) that calls one of its parameters
    (``net(X)``: a model) and that nothing else in the script calls: what the model is,
    and so what its loss should be, is decided by callers the script does not show."""
    indent = _indent(lines[i])
    for j in range(i - 1, -1, -1):
        if not lines[j].strip() or lines[j].lstrip().startswith("#") or _indent(lines[j]) >= indent:
            continue
        indent = _indent(lines[j])
        m = re.match(r"\s*(?:async\s+)?def\s+(\w+)\s*\(", lines[j])
        if m is None:
            if indent == 0:
                return False
            continue
        end = next((k for k in range(j, min(j + 20, len(lines))) if re.search(r"\)\s*(->[^:]*)?:\s*(#.*)?$", lines[k])), j)
        params = [p.split("=")[0].split(":")[0].strip().lstrip("*")
                  for p in " ".join(lines[j:end + 1])[m.end():].rsplit(")", 1)[0].split(",")]
        body_end = next((k for k in range(end + 1, len(lines)) if lines[k].strip()
                         and not lines[k].lstrip().startswith("#") and _indent(lines[k]) <= indent), len(lines))
        body = "\n".join(lines[end + 1:body_end])
        called = [p for p in params if p.isidentifier() and p not in ("self", "cls")
                  and re.search(rf"(?<![\w.]){re.escape(p)}(?:\.forward)?\(", body)]
        if not called:
            return False
        rest = "\n".join(lines[:j] + lines[body_end:])
        return not re.search(rf"\b{re.escape(m.group(1))}\(", rest)
    return False


def _class_mentions(lines: list[str], cls: str, word: str) -> bool:
    """Whether the body of ``class cls`` mentions ``word`` (any case) outside comments."""
    start = next((i for i, line in enumerate(lines) if re.match(rf"^\s*class\s+{cls}\b", line)), None)
    if start is None:
        return False
    for line in lines[start + 1:]:
        if line.strip() and _indent(line) <= _indent(lines[start]):
            break
        if word in line.split("#")[0].lower():
            return True
    return False


def _classifiers(text: str) -> set[str]:
    """The classes whose model's output reaches a cross-entropy loss, as the text shows it: an
    instance ``m = Cls(...)`` (or a parameter it is passed as, ``train(m, ...)``), its output
    ``out = m(x)`` (or ``m.forward(x)``), and a loss call ``criterion(out, y)``/``criterion(m(x), y)``
    of ``criterion = nn.CrossEntropyLoss()``/``NLLLoss()`` or ``F.cross_entropy``/``F.nll_loss``."""
    losses = {"cross_entropy", "nll_loss"} | set(re.findall(
        r"([\w.]+)\s*=\s*(?:torch\.)?(?:nn\.)?(?:CrossEntropyLoss|NLLLoss)\(", text))
    loss_call = "|".join(re.escape(n) for n in sorted(losses, key=len, reverse=True))
    out = set()
    for cls in re.findall(r"^\s*class\s+(\w+)", text, re.M):
        models = set(re.findall(rf"([\w.]+)\s*=\s*{cls}\(", text))
        for model in list(models):  # passed to a function of the file: its parameter
            for func, args in re.findall(rf"\b(\w+)\(([^()]*\b{re.escape(model)}\b[^()]*)\)", text):
                given = [a.strip() for a in args.split(",")]
                position = given.index(model) if model in given else None
                params = re.search(rf"def\s+{func}\(([^)]*)\)", text)
                if position is not None and params:
                    names = [p.split("=")[0].split(":")[0].strip() for p in params.group(1).split(",")]
                    if position < len(names) and names[position].isidentifier():
                        models.add(names[position])
        if not models:
            continue
        called = "|".join(re.escape(m) for m in models)
        outputs = set(re.findall(rf"^[ \t]*(\w+)[ \t]*(?:,[^=\n]*)?=[ \t]*(?:{called})(?:\.forward)?\(", text, re.M))
        fed = "|".join([rf"(?:{called})(?:\.forward)?\(", *(rf"{re.escape(o)}\b" for o in outputs)])
        if re.search(rf"(?:{loss_call})\(\s*(?:input\s*=\s*)?(?:{fed})", text):
            out.add(cls)
    return out


@operator("TL010")
def drop_device(lines):
    for i, m in _sites(lines, r"(torch\.(zeros|ones|randn|rand|arange|empty|full|eye)\([^()]*?),\s*device\s*=\s*[\w.]+\)"):
        new = lines[i][:m.start()] + m.group(1) + ")" + lines[i][m.end():]
        yield Mutant("TL010", _replace(lines, i, new), i + 1, "dropped `device=`")


# A mode-dependent layer built in the code (not a word in a comment or a docstring: makemore
# says "I removed dropout layers"), and a receiver that is a model, not a run object whose
# ``.train()`` is the training itself (torchtune's ``recipe.train()``).
_MODE_LAYER_BUILT = r"Dropout\d?d?\(|BatchNorm\d?d?\(|\bdropout\s*=\s*[\w.]|F\.dropout\("
_RUN_OBJECT = r"(?:recipe|trainer|runner|engine|solver|learner)$"


def _top_level(lines: list[str], i: int) -> str | None:
    """The first line of the top-level statement line ``i`` belongs to (None: before any)."""
    for j in range(i, -1, -1):
        line = lines[j]
        if line.strip() and not line.lstrip().startswith("#") and _indent(line) == 0 \
                and not line.lstrip().startswith((")", "]", "}")):
            return line
    return None


def _functions(lines: list[str]) -> dict[str, tuple[int, int]]:
    """Top-level ``def name(`` -> (first line, end line) of its body."""
    out = {}
    for i, line in enumerate(lines):
        m = re.match(r"def\s+(\w+)\s*\(", line)
        if m:
            end = next((k for k in range(i + 1, len(lines)) if lines[k].strip() and _indent(lines[k]) == 0
                        and not lines[k].lstrip().startswith(("#", ")"))), len(lines))
            out[m.group(1)] = (i, end)
    return out


def _mode_left_by(lines: list[str], start: int, end: int) -> str | None:
    """"eval" or "train": the last mode switch (``x.eval()``, ``x.train()``) in lines [start, end)."""
    last = None
    for k in range(start, end):
        for m in re.finditer(r"\b[\w.]+\.(eval\(\)|train\(\s*\))", lines[k].split("#")[0]):
            last = "eval" if m.group(1) == "eval()" else "train"
    return last


def _already_in_eval(lines: list[str], i: int) -> bool:
    """Line ``i`` (``model.eval()``) opens a top-level function the script runs only after
    another of its functions left the model in eval mode (graviraja's ``inference()`` after the
    last ``evaluate(model, test_iterator)``): deleting the switch plants no bug."""
    functions = _functions(lines)
    owner = next((name for name, (a, b) in functions.items() if a < i < b), None)
    if owner is None:
        return False
    calls = [k for k, line in enumerate(lines) if re.search(rf"(?<![\w.]){owner}\(", line)
             and not re.match(r"\s*def\s", line) and not (_top_level(lines, k) or "").startswith(("def ", "class ", "@"))]
    if not calls:
        return False
    for c in calls:
        mode = None
        for k in range(c - 1, -1, -1):
            if (_top_level(lines, k) or "").startswith(("def ", "class ", "@")):
                continue  # a function's body runs where it is called
            code = lines[k].split("#")[0]
            switch = re.search(r"\b[\w.]+\.(eval\(\)|train\(\s*\))", code)
            called = [f for f in re.findall(r"(?<![\w.])(\w+)\(", code) if f in functions and f != owner]
            found = _mode_left_by(lines, *functions[called[-1]]) if called else None
            if switch or found:
                mode = found or ("eval" if switch.group(1) == "eval()" else "train")
                break
        if mode != "eval":
            return False
    return True


def _class_of(lines: list[str], receiver: str) -> str | None:
    """The class of the file every ``receiver = Cls(...)`` builds (None: another or none)."""
    classes = {m.group(1) for line in lines if (m := re.match(r"\s*class\s+(\w+)", line))}
    built = {m.group(1) for line in lines if (m := re.match(rf"\s*{re.escape(receiver)}\s*=\s*(\w+)\(", line))}
    return built.pop() if len(built) == 1 and built <= classes else None


def _without_mode_layers(lines: list[str], receiver: str) -> bool:
    """``receiver`` is built from a class of the file whose body builds no dropout or batch
    norm (only ``nn.`` layers such as LayerNorm) and no other class of the file: switching its
    mode changes nothing (CS547 HW7's LayerNorm discriminator)."""
    cls = _class_of(lines, receiver)
    return cls is not None and _class_without_mode_layers(lines, cls, set())


def _class_without_mode_layers(lines: list[str], cls: str, seen: set) -> bool:
    """The class ``cls`` of the file builds no dropout or batch norm, takes none in its
    constructor, and builds no class of the file that does (clustergan's ``Reshape``)."""
    seen.add(cls)
    classes = {m.group(1) for line in lines if (m := re.match(r"\s*class\s+(\w+)", line))} - {cls}
    start = next(k for k, line in enumerate(lines) if re.match(rf"\s*class\s+{cls}\b", line))
    body = []
    for line in lines[start + 1:]:
        if line.strip() and not line.lstrip().startswith("#") and _indent(line) <= _indent(lines[start]):
            break
        body.append(line.split("#")[0])
    text = "\n".join(body)
    init = re.search(r"def __init__\(self\s*(?:,([^)]*))?\)", text)
    if init is None or re.search(_MODE_LAYER_BUILT, text) or any(
            re.search(rf"\b{c}\b", text) and (c in seen or not _class_without_mode_layers(lines, c, seen))
            for c in classes):
        return False
    # what ``__init__`` is given builds no layer: no parameter is called, named like a module, or
    # put in a container of layers (clustergan's ``Encoder_CNN(latent_dim, n_c, verbose=False)``)
    params = [p.split("=")[0].split(":")[0].strip().lstrip("*") for p in (init.group(1) or "").split(",")]
    for param in filter(None, params):
        stored = [m.group(1) for m in re.finditer(rf"self\.(\w+)\s*=\s*{param}\s*$", text, re.M)]
        if re.search(r"drop|norm|net|model|layer|module|block|encoder|decoder|backbone", param, re.I) \
                or re.search(rf"\b{param}\s*\(", text) \
                or any(re.search(rf"self\.{attr}\s*\(", text) for attr in stored) \
                or re.search(rf"(Sequential|ModuleList|ModuleDict|add_module)\([^)]*\b{param}\b", text):
            return False
    return True


def _restored_later(lines: list[str], i: int, receiver: str) -> bool:
    """Another ``receiver.train()`` stays in the loop that holds line ``i`` (CS547 HW7's epoch
    loop: ``aG.train()`` at its top, and ``aG.eval()``; samples; ``aG.train()`` at its end):
    deleting either still leaves the model in training mode wherever it trains."""
    rx_train = re.compile(rf"^\s*{re.escape(receiver)}\.train\(\s*\)\s*$")
    loop, indent = None, _indent(lines[i])
    for k in range(i - 1, -1, -1):  # the innermost loop around line i
        if lines[k].strip() and not lines[k].lstrip().startswith("#") and _indent(lines[k]) < indent:
            indent = _indent(lines[k])
            if re.match(r"\s*(for|while)\s", lines[k]):
                loop = k
                break
    if loop is None:
        return False
    for j in range(loop + 1, len(lines)):
        if lines[j].strip() and not lines[j].lstrip().startswith("#") and _indent(lines[j]) <= _indent(lines[loop]):
            return False
        if j != i and rx_train.match(lines[j]):
            return True
    return False


@operator("TL011")
def delete_train_call(lines):
    code = "\n".join(line for line in lines if not line.lstrip().startswith("#"))
    if not re.search(r"\.eval\(\)", code) or not re.search(_MODE_LAYER_BUILT, code):
        return
    for i, m in _sites(lines, r"^\s*([\w.]+)\.train\(\)\s*$"):
        if re.search(_RUN_OBJECT, m.group(1).lower()):
            continue
        if _without_mode_layers(lines, m.group(1)) or _restored_later(lines, i, m.group(1)):
            continue  # no bug planted: its mode changes nothing, or it is put back in training mode later
        yield Mutant("TL011", _replace(lines, i, None), None, f"deleted `{lines[i].strip()}`")


@operator("TL011")
def delete_eval_call(lines):
    code = "\n".join(line for line in lines if not line.lstrip().startswith("#"))
    if not re.search(_MODE_LAYER_BUILT, code):
        return
    for i, m in _sites(lines, r"^\s*([\w.]+)\.eval\(\)\s*$"):
        if _without_mode_layers(lines, m.group(1)) or _already_in_eval(lines, i):
            continue  # no bug planted: its mode changes nothing, or it is in eval mode there already
        yield Mutant("TL011", _replace(lines, i, None), None, f"deleted `{lines[i].strip()}`")


@operator("TL011")
def uncalled_switch(lines):
    # ``model.eval`` written without its call (a statement that only reads the method: a
    # typo that leaves the mode as it was), on the switches the deletions above would take
    code = "\n".join(line for line in lines if not line.lstrip().startswith("#"))
    if not re.search(_MODE_LAYER_BUILT, code):
        return
    for i, m in _sites(lines, r"^\s*([\w.]+)\.eval\(\)\s*$"):
        if _without_mode_layers(lines, m.group(1)) or _already_in_eval(lines, i):
            continue
        yield Mutant("TL011", _replace(lines, i, lines[i].replace(".eval()", ".eval", 1)), None,
                     f"`{lines[i].strip()}` -> `{m.group(1)}.eval`")
    if not re.search(r"\.eval\(\)", code):
        return
    for i, m in _sites(lines, r"^\s*([\w.]+)\.train\(\)\s*$"):
        if re.search(_RUN_OBJECT, m.group(1).lower()) or _without_mode_layers(lines, m.group(1)) \
                or _restored_later(lines, i, m.group(1)):
            continue
        yield Mutant("TL011", _replace(lines, i, lines[i].replace(".train()", ".train", 1)), None,
                     f"`{lines[i].strip()}` -> `{m.group(1)}.train`")


@operator("TL012")
def delete_unscale(lines):
    for i, _ in _sites(lines, r"^\s*\w+\.unscale_\("):
        clip = next((j for j in range(i + 1, min(i + 10, len(lines))) if "clip_grad" in lines[j]), None)
        if clip is not None:
            yield Mutant("TL012", _replace(lines, i, None), clip + 1, f"deleted `{lines[i].strip()}`")


@operator("TL014")
def delete_set_epoch(lines):
    # the per-epoch call (``set_epoch(epoch)``), not a one-off reset to a literal (``set_epoch(0)``)
    for i, _ in _sites(lines, r"^\s*[\w.]+\.set_epoch\((?!\s*\d+\s*\))"):
        yield Mutant("TL014", _replace(lines, i, None), None, f"deleted `{lines[i].strip()}`")


@operator("TL015")
def non_strict(lines):
    for i, m in _sites(lines, r"\.load_state_dict\(([^()]*(\([^()]*\))?[^()]*)\)\s*$"):
        if "strict" in m.group(1):
            continue
        receiver = re.search(r"([\w.]+)$", lines[i][:m.start()])
        if receiver and re.search(r"optim|sched|loader|scaler|_dl\b|^dl\b", receiver.group(1).rsplit(".", 1)[-1], re.I):
            continue  # optimizers, schedulers, data loaders and scalers take no `strict`: no bug planted
        if re.fullmatch(r"\s*[\w.]+\.state_dict\(\)\s*", m.group(1)):
            continue  # a live module's own state_dict() (a target network's copy): its keys cannot mismatch
        new = lines[i][:m.start()] + f".load_state_dict({m.group(1)}, strict=False)" + lines[i][m.end():]
        yield Mutant("TL015", _replace(lines, i, new), i + 1, "`strict=False` added")


def _test_script(lines: list[str]) -> bool:
    """A test script (``def test_*`` functions): TL016 skips tests, which load what they wrote."""
    return any(re.match(r"(async\s+)?def test_", line) for line in lines)


_FILE_NAME = re.compile(r"""["']([^"'/]*?/)*([^"'/]+\.\w{1,8})["']""")


def _own_checkpoint(lines: list[str], path: str) -> bool:
    """The script writes the file ``path`` names (TL016 leaves such loads alone: a resumed run
    reads its own checkpoint): a write (``torch.save(...)``, ``open(..., "w")``, or the
    assignment of a name a write uses) holds the path as written, or a file name written in the
    path (or in the assignments of the name it is) appears in one."""
    writes = [line for line in lines if re.search(r"torch\.save\(|\bopen\(.*[\"'][wa]b?[\"']", line)]
    used = {word for line in writes for word in re.findall(r"\w+", line)}
    writes += [line for line in lines if (m := re.match(r"\s*(\w+)\s*=[^=]", line)) and m.group(1) in used]
    if any(path in line for line in writes):
        return True
    loads = [path]
    if re.fullmatch(r"\w+", path):
        loads += [line for line in lines if re.match(rf"\s*{re.escape(path)}\s*=[^=]", line)]
    names = {m.group(2) for text in loads for m in _FILE_NAME.finditer(text)}
    return any(name in line for name in names for line in writes)


@operator("TL016")
def unsafe_load(lines):
    if _test_script(lines):
        return  # a test loads what it wrote: TL016 skips test files
    for i, m in _sites(lines, r"weights_only\s*=\s*True"):
        new = lines[i][:m.start()] + "weights_only=False" + lines[i][m.end():]
        yield Mutant("TL016", _replace(lines, i, new), i + 1, "`weights_only=True` -> `False`")


@operator("TL016")
def add_weights_only_false(lines):
    # The edit torch 2.6's refusals (``UnpicklingError: Weights only load failed``) prompt:
    # ``torch.load(path)`` -> ``torch.load(path, weights_only=False)``, on a checkpoint the
    # script does not write itself (a pretrained file, a path from the command line).
    if _test_script(lines):
        return
    for i, m in _sites(lines, r"torch\.load\(((?:[^()]|\([^()]*\))*)\)"):
        args = m.group(1)
        if not args.strip() or "weights_only" in args or "pickle_module" in args or "**" in args \
                or re.match(r"\s*\w+\s*=[^=]", args) or lines[i][:m.start()].rstrip().endswith("`"):
            continue  # no path given first (``torch.load(mmap=True)`` in a docstring)
        path = args.split(",")[0].strip() if "(" not in args.split(",")[0] else args.strip()
        if _own_checkpoint(lines, path):
            continue
        new = lines[i][:m.end() - 1] + ", weights_only=False" + lines[i][m.end() - 1:]
        yield Mutant("TL016", _replace(lines, i, new), i + 1, "`weights_only=False` added to `torch.load`")


@operator("TL017")
def unscaled_accumulation(lines):
    if any("accelerator.backward(" in line for line in lines):
        return  # Accelerate (or DeepSpeed under it) divides by its own accumulation count: no bug planted
    for i, m in _sites(lines, r"(\w*loss\w*)\s*=\s*(\w*loss\w*)\s*/\s*[\w.]*(accum|accumulation|grad_acc)\w*"):
        yield Mutant("TL017", _replace(lines, i, None), None, f"deleted `{lines[i].strip()}`")


@operator("TL020")
def decorate_no_grad(lines):
    # ``@torch.no_grad()`` put on the function that computes a loss and calls its backward
    # (an inference decorator copied onto a training step: replicate/cog#1681)
    if not any(re.match(r"\s*import torch\b", line) for line in lines):
        return
    for i, m in _sites(lines, r"^(\s*)(\w+)\.backward\(\s*\)"):
        indent, loss = len(m.group(1)), m.group(2)
        start = next((j for j in range(i - 1, max(i - 60, -1), -1)
                      if lines[j].strip() and _indent(lines[j]) < indent and re.match(r"\s*def \w+\(", lines[j])), None)
        if start is None or any(lines[j].strip() and _indent(lines[j]) <= _indent(lines[start])
                                for j in range(start + 1, i)):
            continue  # the backward is not in that function (a module-level loop after it)
        if any(word in lines[j] for j in range(max(start - 2, 0), i + 1)
               for word in ("no_grad", "inference_mode", "enable_grad", "set_grad_enabled")):
            continue  # a grad mode is chosen inside already: the decorator may not decide
        if not any(re.match(rf"\s*{re.escape(loss)}\s*(=|\+=)", lines[j]) for j in range(start + 1, i)):
            continue  # the loss must be computed in that function
        out = list(lines)
        out.insert(start, " " * _indent(lines[start]) + "@torch.no_grad()")
        yield Mutant("TL020", "\n".join(out) + "\n", i + 2, f"`@torch.no_grad()` on `{lines[start].strip()}`")


@operator("TL021")
def optimizer_before_new_head(lines):
    # the optimizer's construction moved above the line that replaces the model's head
    for i, m in _sites(lines, r"^(\s*)(\w+)((\.\w+)+|\.\w+\[-?\d+\])\s*=\s*(nn|torch\.nn)\.Linear\("):
        model = m.group(2)
        own = re.compile(rf"^\s*\w+\s*=\s*[\w.]*(optim|Adam|SGD)[\w.]*\(\s*{re.escape(model)}\.parameters\(\).*\)\s*$")
        j = next((k for k in range(i + 1, min(i + 30, len(lines))) if own.search(lines[k])), None)
        if j is None or _indent(lines[j]) != _indent(lines[i]):
            continue
        out = list(lines)
        moved = out.pop(j)
        out.insert(i, moved)
        yield Mutant("TL021", "\n".join(out) + "\n", i + 2, f"moved `{moved.strip()}` above `{lines[i].strip()}`")


@operator("TL025")
def legacy_reduction(lines):
    """``reduction='sum'`` / ``'none'`` / ``'mean'`` of a torch loss written as PyTorch 0.4 code had it."""
    legacy = {"sum": "size_average=False", "none": "reduce=False", "mean": "size_average=True"}
    for i, m in _sites(lines, r"reduction\s*=\s*['\"](sum|none|mean)['\"]"):
        if not re.search(r"Loss\(|\bF\.\w+\(|functional\.\w+\(", lines[i]):
            continue  # a reduction= of something that is not a torch loss
        new = lines[i][:m.start()] + legacy[m.group(1)] + lines[i][m.end():]
        yield Mutant("TL025", _replace(lines, i, new), i + 1, f"`{m.group(0)}` -> `{legacy[m.group(1)]}`")


@operator("TL026")
def log_of_softmax(lines):
    """``F.log_softmax(x, dim)`` written as the log of a softmax."""
    if not any(re.match(r"\s*import torch\b", line) for line in lines):
        return
    for i, m in _sites(lines, r"\b(F|torch|nn\.functional)\.log_softmax\("):
        depth, end = 1, None
        for k in range(m.end(), len(lines[i])):
            depth += {"(": 1, ")": -1}.get(lines[i][k], 0)
            if depth == 0:
                end = k
                break
        if end is None:
            continue  # the call spans lines
        inner = lines[i][m.end():end]
        new = lines[i][:m.start()] + f"torch.log({m.group(1)}.softmax({inner}))" + lines[i][end + 1:]
        yield Mutant("TL026", _replace(lines, i, new), i + 1, f"`{m.group(1)}.log_softmax(` -> `torch.log({m.group(1)}.softmax(`")


# -- running ---------------------------------------------------------------------------------------

_IMPORT = re.compile(r"^\s*(?:from\s+(\w+)(?:\.\w+)*\s+import\b|import\s+([\w\s,.]+?)\s*(?:#.*)?$)", re.M)


def imported_siblings(source: Path, text: str) -> list[Path]:
    """The project's modules next to ``source`` that it imports (``from utils import
    AverageMeter``, ``from model import GPT``, ``import Model, Replay``): a plain module
    ``X.py`` or a package ``X/`` of the script's folder. They go with the script, as they
    would when the project is linted, so that the project pass sees the classes the script
    takes from them; only the script is edited and its findings counted."""
    names = set()
    for m in _IMPORT.finditer(text):
        if m.group(1):
            names.add(m.group(1))
        else:
            names.update(part.split()[0].split(".")[0] for part in m.group(2).split(",") if part.split())
    out = []
    for name in sorted(names):
        for candidate in (source.parent / f"{name}.py", source.parent / name):
            if candidate != source and (candidate.is_file() or (candidate / "__init__.py").is_file()):
                out.append(candidate)
                break
    return out


def findings(repo: Path, rel: str, text: str, siblings: bool = False) -> list[dict]:
    from torchlint.cli import main

    (repo / rel).write_text(text, encoding="utf-8")
    out = io.StringIO()
    target = repo / rel
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        main(["check", "--isolated", "--no-cache", "--exit-zero", "--format", "json",
              str(target.parent if siblings else target)])
    return [f for f in json.loads(out.getvalue() or "[]")
            if not siblings or Path(f["path"]).resolve() == target.resolve()]


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
            siblings = imported_siblings(source, text)
            for sibling in siblings:
                copy = repo / Path(rel).parent / sibling.name
                if sibling.is_dir():
                    shutil.copytree(sibling, copy, ignore=shutil.ignore_patterns("*.ipynb", "__pycache__"))
                else:
                    shutil.copy(sibling, copy)
            lint = functools.partial(findings, siblings=bool(siblings))
            before = lint(repo, rel, text)
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
                    if mutant.unless and any(r == mutant.unless for r, _ in seen):
                        continue
                    after = lint(repo, rel, mutant.text)
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
