"""TL006 missing-seed: a training entry point that never seeds torch (or uses Python's /
numpy's global random generator without seeding it).

Per-file pass (one walk): the file is cut into *units* -- each module-level function or
method (nested defs merged into it), each module-level statement, and the
``if __name__ == "__main__":`` block. For every unit we record backward/step calls (also per
outermost loop), Lightning ``Trainer.fit`` calls, seeding calls, calls/references to
same-file functions and classes, and calls to imported functions. ``finish`` then works out,
inside the file, whether the entry point (main block and top-level statements, plus every
same-file function they reach) runs a training loop and what it seeds. What only another
file can answer (does ``from .utils import set_seed`` seed torch?) goes into
``ctx.facts["TL006"]``, and ``check_project`` settles it from the other files' records.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Any, Iterable

import libcst as cst

from torchlint.finding import Finding, Severity, Span
from torchlint.rule import Invalid, Option, Rule, Valid
from torchlint.semantic.libraries import LIGHTNING_ROOTS, UTILITY_ROOTS
from torchlint.semantic.model import CLASS, FUNCTION, LAMBDA, MODULE
from torchlint.semantic.training import ENGINES
from torchlint.torch_api import expr_key

TORCH, RANDOM, NUMPY = "torch", "random", "numpy"
ALL_GENERATORS = (TORCH, RANDOM, NUMPY)

# torch.manual_seed, torch.cuda.manual_seed(_all), torch.random.manual_seed, other backends.
_TORCH_SEED = re.compile(r"^torch(\.(cuda|random|xpu|mps|npu|hpu|mlu))?\.manual_seed(_all)?$")
# Library seeders that seed Python's random, numpy and torch together.
_SEED_ALL = {
    "transformers.set_seed", "transformers.trainer_utils.set_seed", "transformers.enable_full_determinism",
    "transformers.trainer_utils.enable_full_determinism", "accelerate.utils.set_seed",
    "accelerate.utils.random.set_seed",
}
PY_RANDOM_USES = {
    "random", "uniform", "randint", "randrange", "choice", "choices", "shuffle", "sample", "gauss",
    "normalvariate", "lognormvariate", "expovariate", "vonmisesvariate", "gammavariate", "triangular",
    "betavariate", "paretovariate", "weibullvariate", "getrandbits", "randbytes", "binomialvariate",
}
# numpy.random attributes that are not draws from the global generator.
NUMPY_NOT_USES = {
    "seed", "default_rng", "RandomState", "Generator", "SeedSequence", "get_state", "set_state",
    "BitGenerator", "PCG64", "PCG64DXSM", "MT19937", "Philox", "SFC64", "bit_generator", "mtrand",
}
# Roots whose functions can never be a project seed helper: classified by name, never resolved.
_EXTERNAL_ROOTS = UTILITY_ROOTS | {"torch"}
# Names of values drawn for something other than training randomness.
_INCIDENTAL = re.compile(r"port|seed|uuid|(^|_)(id|name|tag|run)$", re.IGNORECASE)
_CONSTRUCTORS = ("__init__", "__post_init__", "__new__")
# Method names that seed one generator object, not the global torch generator
# (torch.Generator().manual_seed, rng.seed, env.seed).
_OBJECT_SEED_METHODS = {"seed", "manual_seed", "initial_seed", "manual_seed_all"}


def seedish(name: str) -> bool:
    """A name that reads like a seeding helper: set_seed, seed_everything, fix_seed, init_seeds."""
    low = name.lower()
    return "seed" in low and not low.startswith(("get", "_get", "initial", "worker_init")) and low != "seed_worker"


def known_generators(qualified: str) -> set[str] | None:
    """What a library function seeds, for names torchlint knows (None: not a known library
    name, resolve it through the project or by its name)."""
    root, _, rest = qualified.partition(".")
    last = qualified.rsplit(".", 1)[-1]
    if root in LIGHTNING_ROOTS:
        return set(ALL_GENERATORS) if last == "seed_everything" else None
    if qualified in _SEED_ALL:
        return set(ALL_GENERATORS)
    if root == "torch":
        return {TORCH} if _TORCH_SEED.match(qualified) else set()
    if root == "random":
        return {RANDOM} if rest == "seed" else set()
    if root == "numpy":
        return {NUMPY} if rest == "random.seed" else set()
    if root in _EXTERNAL_ROOTS:
        return set()
    return None


def random_use(qualified: str) -> str | None:
    """``random`` / ``numpy`` when the call draws from that global generator."""
    if qualified.startswith("random."):
        return RANDOM if qualified[7:] in PY_RANDOM_USES else None
    if qualified.startswith("numpy.random."):
        rest = qualified[13:]
        return NUMPY if "." not in rest and rest not in NUMPY_NOT_USES else None
    return None


def is_main_guard(stmt: cst.CSTNode) -> bool:
    """``if __name__ == "__main__":`` (either operand order; also ``... and cond``)."""
    return isinstance(stmt, cst.If) and _is_main_test(stmt.test)


def _is_main_test(test: cst.BaseExpression) -> bool:
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        return _is_main_test(test.left) or _is_main_test(test.right)
    if not isinstance(test, cst.Comparison):
        return False
    if len(test.comparisons) != 1 or not isinstance(test.comparisons[0].operator, cst.Equal):
        return False
    sides = (test.left, test.comparisons[0].comparator)
    names = [s for s in sides if isinstance(s, cst.Name) and s.value == "__name__"]
    strings = [s for s in sides if isinstance(s, cst.SimpleString) and s.evaluated_value == "__main__"]
    return len(names) == 1 and len(strings) == 1


@dataclass(eq=False)
class _Loop:
    """An outermost loop of a unit (or an ignite engine's process function, run per batch)."""

    backward: bool = False
    step: bool = False
    callees: list = field(default_factory=list)  # same-file function nodes run per iteration


@dataclass(eq=False)
class _Unit:
    """One module-level function or method (nested defs merged into it), module-level
    statement or main block: what the semantic model says its call sites do."""

    key: str
    backward: bool = False
    step: bool = False
    fit: bool = False
    loops: dict = field(default_factory=dict)  # outermost loop node (or engine call) -> _Loop
    callees: list = field(default_factory=list)  # same-file function nodes called or passed
    imported: set = field(default_factory=set)  # qualified names of imported functions called
    seeds: set = field(default_factory=set)  # generators seeded directly
    unresolved_seedish: bool = False  # a seed-like call to nothing this file defines


# An unseeded training entry point in a test file (the skip-tests cases).
_TEST_SCRIPT = (
    "import torch\n\n"
    "if __name__ == '__main__':\n"
    "    model, opt = build()\n"
    "    for x, y in loader:\n"
    "        opt.zero_grad()\n"
    "        model(x).sum().backward()\n"
    "        opt.step()\n"
)


class MissingSeed(Rule):
    code = "TL006"
    name = "missing-seed"
    severity = Severity.WARNING
    summary = "Training entry point never seeds torch (or uses random/numpy.random unseeded)"
    uses_semantic_model = True
    requires_text = ("backward", "fit(", "seed")
    skips_test_files = True
    options = {
        "skip-tests": Option(True, bool, "skip entry points in test files (tests/, test/, testing/, test_utils/ "
                                         "directories, test_*.py, *_test.py, conftest.py): a test that needs "
                                         "reproducible runs seeds where it compares them"),
    }

    VALID = [
        # A test script's entry point: tests seed where they compare runs.
        Valid(
            _TEST_SCRIPT,
            path="tests/test_checkpointing.py",
        ),
        # Seeded with torch.manual_seed in the main block.
        Valid(
            "import torch\n\n"
            "def train(model, loader, opt):\n"
            "    for x, y in loader:\n"
            "        loss = model(x).sum()\n"
            "        loss.backward()\n"
            "        opt.step()\n\n"
            "if __name__ == '__main__':\n"
            "    torch.manual_seed(0)\n"
            "    train(None, [], None)\n"
        ),
        # Seeded through a same-file helper that the main block calls.
        Valid(
            "import torch\n\n"
            "def set_everything(seed):\n"
            "    torch.cuda.manual_seed_all(seed)\n\n"
            "def main():\n"
            "    set_everything(1)\n"
            "    optimizer = torch.optim.SGD([], lr=0.1)\n"
            "    for batch in range(10):\n"
            "        loss = batch\n"
            "        loss.backward()\n"
            "        optimizer.step()\n\n"
            "if __name__ == '__main__':\n"
            "    main()\n"
        ),
        # Library module: a training loop but no entry point.
        Valid(
            "def fit(model, loader, optimizer):\n"
            "    for x, y in loader:\n"
            "        model(x).backward()\n"
            "        optimizer.step()\n"
        ),
        # Lightning: seed_everything before trainer.fit.
        Valid(
            "import lightning as L\n\n"
            "if __name__ == '__main__':\n"
            "    L.seed_everything(42)\n"
            "    trainer = L.Trainer(max_epochs=3)\n"
            "    trainer.fit(model)\n"
        ),
        # Hugging Face Trainer seeds itself from TrainingArguments.seed.
        Valid(
            "from transformers import Trainer, TrainingArguments\n\n"
            "if __name__ == '__main__':\n"
            "    trainer = Trainer(model=model, args=TrainingArguments('out', seed=0))\n"
            "    trainer.train()\n"
            "    trainer.fit = None\n"
        ),
        # An imported helper from a module outside the linted files, named like a seeder.
        Valid(
            "from utils import set_seed\n\n"
            "if __name__ == '__main__':\n"
            "    set_seed(0)\n"
            "    for x in data:\n"
            "        loss = model(x)\n"
            "        loss.backward()\n"
            "        opt.step()\n"
        ),
        # Accelerate loop seeded with accelerate.utils.set_seed (random + numpy too).
        Valid(
            "import random\n"
            "from accelerate import Accelerator\n"
            "from accelerate.utils import set_seed\n\n"
            "def main():\n"
            "    accelerator = Accelerator()\n"
            "    set_seed(42)\n"
            "    for batch in loader:\n"
            "        random.shuffle(batch)\n"
            "        accelerator.backward(model(batch))\n"
            "        optimizer.step()\n\n"
            "if __name__ == '__main__':\n"
            "    main()\n"
        ),
        # Entry point that only evaluates: no backward + step in a loop.
        Valid(
            "import torch\n\n"
            "if __name__ == '__main__':\n"
            "    model = torch.load('m.pt')\n"
            "    for x in data:\n"
            "        print(model(x))\n"
        ),
        # A scheduler step is not an optimizer step.
        Valid(
            "if __name__ == '__main__':\n"
            "    for x in data:\n"
            "        model(x).backward()\n"
            "        lr_scheduler.step()\n"
        ),
        # Seeded at module top level; numpy through a default_rng generator.
        Valid(
            "import numpy as np\n"
            "import torch\n"
            "torch.manual_seed(0)\n"
            "rng = np.random.default_rng(0)\n\n"
            "def train():\n"
            "    for x in rng.permutation(10):\n"
            "        model(x).backward()\n"
            "        opt.step()\n\n"
            "if __name__ == '__main__':\n"
            "    train()\n"
        ),
        # random and numpy used and seeded, torch seeded via a training function passed to
        # mp.spawn (referenced, not called).
        Valid(
            "import random\n"
            "import numpy as np\n"
            "import torch\n"
            "import torch.multiprocessing as mp\n\n"
            "def worker(rank):\n"
            "    random.seed(rank)\n"
            "    np.random.seed(rank)\n"
            "    torch.manual_seed(rank)\n"
            "    for x in np.random.permutation(8):\n"
            "        random.shuffle(x)\n"
            "        model(x).backward()\n"
            "        optimizer.step()\n\n"
            "if __name__ == '__main__':\n"
            "    mp.spawn(worker, nprocs=2)\n"
        ),
        # Seeding through a method of a same-file trainer class.
        Valid(
            "import torch\n\n"
            "class Recipe:\n"
            "    def __init__(self, cfg):\n"
            "        torch.manual_seed(cfg.seed)\n"
            "    def train(self):\n"
            "        for batch in self.loader:\n"
            "            self.model(batch).backward()\n"
            "            self.optimizer.step()\n\n"
            "if __name__ == '__main__':\n"
            "    Recipe(cfg).train()\n"
        ),
        # Python's random only picks a free port, a run name and a seed (which is then used).
        Valid(
            "import os\n"
            "import random\n"
            "import torch\n\n"
            "def main(seed=None):\n"
            "    seed = seed or random.randint(0, 10000)\n"
            "    torch.manual_seed(seed)\n"
            "    os.environ['MASTER_PORT'] = str(random.randint(20000, 30000))\n"
            "    run_name = f'run-{random.randint(0, 99)}'\n"
            "    for x in data:\n"
            "        model(x).backward()\n"
            "        optimizer.step()\n\n"
            "if __name__ == '__main__':\n"
            "    main()\n"
        ),
        # A unittest file: the main block runs the tests, not the training helper.
        Valid(
            "import unittest\n\n"
            "class T(unittest.TestCase):\n"
            "    def test_train(self):\n"
            "        for x in data:\n"
            "            model(x).backward()\n"
            "            opt.step()\n\n"
            "if __name__ == '__main__':\n"
            "    unittest.main()\n"
        ),
    ]
    INVALID = [
        # ... unless the option says tests are linted too.
        Invalid(
            _TEST_SCRIPT,
            lines=(3,),
            messages=(
                "training entry point never seeds torch, so weight init, dropout and shuffling differ on "
                "every run and runs cannot be reproduced or compared; call torch.manual_seed(seed) (or "
                "lightning's seed_everything) before building the model",
            ),
            path="tests/test_checkpointing.py",
            options={"skip-tests": False},
        ),
        # The fixture's shape: loop in train(), called from the main block.
        Invalid(
            "import torch\n\n"
            "def train(model, loader):\n"
            "    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
            "    for x, y in loader:\n"
            "        loss = model(x)\n"
            "        loss.backward()\n"
            "        optimizer.step()\n\n"
            "if __name__ == '__main__':\n"
            "    train(model, loader)\n",
            lines=(10,),
            messages=(
                "training entry point never seeds torch, so weight init, dropout and shuffling differ on "
                "every run and runs cannot be reproduced or compared; call torch.manual_seed(seed) (or "
                "lightning's seed_everything) before building the model",
            ),
        ),
        # Defining a seed helper is not enough: it must be called.
        Invalid(
            "import torch\n\n"
            "def set_seed(seed):\n"
            "    torch.manual_seed(seed)\n\n"
            "if __name__ == '__main__':\n"
            "    for x in data:\n"
            "        model(x).backward()\n"
            "        opt.step()\n",
            lines=(6,),
            messages=(
                "training entry point never seeds torch, so weight init, dropout and shuffling differ on "
                "every run and runs cannot be reproduced or compared; call torch.manual_seed(seed) (or "
                "lightning's seed_everything) before building the model",
            ),
        ),
        # Seeding only Python's random and numpy does not seed torch.
        Invalid(
            "import random\n"
            "import numpy as np\n\n"
            "if __name__ == '__main__':\n"
            "    random.seed(0)\n"
            "    np.random.seed(0)\n"
            "    for x in data:\n"
            "        model(x).backward()\n"
            "        opt.step()\n",
            lines=(4,),
            messages=(
                "training entry point never seeds torch, so weight init, dropout and shuffling differ on "
                "every run and runs cannot be reproduced or compared; call torch.manual_seed(seed) (or "
                "lightning's seed_everything) before building the model",
            ),
        ),
        # Top-level script, no main guard: reported at the first training statement.
        Invalid(
            "import torch\n"
            "model = torch.nn.Linear(2, 2)\n"
            "opt = torch.optim.Adam(model.parameters())\n"
            "for x in data:\n"
            "    model(x).sum().backward()\n"
            "    opt.step()\n",
            lines=(4,),
            messages=(
                "training entry point never seeds torch, so weight init, dropout and shuffling differ on "
                "every run and runs cannot be reproduced or compared; call torch.manual_seed(seed) (or "
                "lightning's seed_everything) before building the model",
            ),
        ),
        # Lightning Trainer.fit without seed_everything.
        Invalid(
            "import pytorch_lightning as pl\n\n"
            "def main():\n"
            "    trainer = pl.Trainer(max_epochs=5)\n"
            "    trainer.fit(model, datamodule=dm)\n\n"
            "if __name__ == '__main__':\n"
            "    main()\n",
            lines=(7,),
            messages=(
                "training entry point never seeds torch, so weight init, dropout and shuffling differ on "
                "every run and runs cannot be reproduced or compared; call torch.manual_seed(seed) (or "
                "lightning's seed_everything) before building the model",
            ),
        ),
        # An unresolved helper not named like a seeder does not count.
        Invalid(
            "from utils import setup\n\n"
            "if __name__ == '__main__':\n"
            "    setup()\n"
            "    for x in data:\n"
            "        accelerator.backward(model(x))\n"
            "        optimizer.step()\n",
            lines=(3,),
            messages=(
                "training entry point never seeds torch, so weight init, dropout and shuffling differ on "
                "every run and runs cannot be reproduced or compared; call torch.manual_seed(seed) (or "
                "lightning's seed_everything) before building the model",
            ),
        ),
        # torch seeded, Python's random used unseeded: the second message.
        Invalid(
            "import random\n"
            "import torch\n\n"
            "def loader():\n"
            "    items = list(range(10))\n"
            "    random.shuffle(items)\n"
            "    return items\n\n"
            "if __name__ == '__main__':\n"
            "    torch.manual_seed(0)\n"
            "    for x in loader():\n"
            "        model(x).backward()\n"
            "        opt.step()\n",
            lines=(9,),
            messages=(
                "uses random.shuffle but never seeds Python's random, so shuffling/augmentation/sampling "
                "differs on every run; call random.seed(seed) next to torch.manual_seed(seed)",
            ),
        ),
        # numpy's global generator used unseeded (a default_rng elsewhere does not seed it).
        Invalid(
            "import numpy as np\n"
            "import torch\n\n"
            "if __name__ == '__main__':\n"
            "    torch.manual_seed(0)\n"
            "    rng = np.random.default_rng(0)\n"
            "    for x in np.random.permutation(10):\n"
            "        model(x).backward()\n"
            "        opt.step()\n",
            lines=(4,),
            messages=(
                "uses np.random.permutation but never seeds numpy's global generator, so "
                "shuffling/augmentation/sampling differs on every run; call np.random.seed(seed) next to "
                "torch.manual_seed(seed)",
            ),
        ),
        # A loop that calls a same-file function doing backward + step.
        Invalid(
            "def train_step(batch):\n"
            "    loss = model(batch)\n"
            "    scaler.scale(loss).backward()\n"
            "    scaler.step(optimizer)\n\n"
            "if __name__ == '__main__':\n"
            "    for batch in loader:\n"
            "        train_step(batch)\n",
            lines=(6,),
            messages=(
                "training entry point never seeds torch, so weight init, dropout and shuffling differ on "
                "every run and runs cannot be reproduced or compared; call torch.manual_seed(seed) (or "
                "lightning's seed_everything) before building the model",
            ),
        ),
        # A torch.Generator seeded for the DataLoader does not seed model initialisation.
        Invalid(
            "import torch\n\n"
            "def main():\n"
            "    g = torch.Generator()\n"
            "    g.manual_seed(0)\n"
            "    for x in DataLoader(ds, generator=g):\n"
            "        fabric.backward(model(x))\n"
            "        optimizer.step()\n\n"
            "if __name__ == '__main__':\n"
            "    main()\n",
            lines=(10,),
            messages=(
                "training entry point never seeds torch, so weight init, dropout and shuffling differ on "
                "every run and runs cannot be reproduced or compared; call torch.manual_seed(seed) (or "
                "lightning's seed_everything) before building the model",
            ),
        ),
    ]

    # -- the analysis: everything comes from ctx.semantic -------------------------------
    def finish(self) -> None:
        sem = self.ctx.semantic
        self.model, self.graph, self.training = sem.model, sem.loose_graph, sem.training
        self._index_units()
        self._collect()
        self._store_facts()

    def _index_units(self) -> None:
        """Unit keys: entry statements of the module, and module-level functions/methods."""
        module = self.ctx.module
        self._order: list[str] = []  # entry unit keys in source order
        self._top_keys: dict[int, str] = {}
        self._entry_nodes: dict[str, cst.CSTNode] = {}
        for i, stmt in enumerate(module.body):
            if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
                continue
            if isinstance(stmt, cst.SimpleStatementLine) and all(isinstance(s, (cst.Import, cst.ImportFrom)) for s in stmt.body):
                continue
            key = f"<main:{i}>" if is_main_guard(stmt) else f"<top:{i}>"
            self._top_keys[i] = key
            self._entry_nodes[key] = stmt.test if key.startswith("<main") else stmt
            self._order.append(key)
        self.units: dict[str, _Unit] = {}
        self._fn_key: dict[cst.CSTNode, str] = {}  # function node -> unit key (nested: the enclosing unit)
        self._functions: set[str] = set()  # module-level function names
        self._classes: dict[str, list[str]] = {}  # module-level class -> its method keys
        for scope in self.model.scopes.values():
            if scope.kind not in (FUNCTION, LAMBDA):
                continue
            key = self._unit_key(scope)
            if key is not None:
                self._fn_key[scope.node] = key
        for info in self.model.classes.values():
            if all(s.kind in (CLASS, MODULE) for s in info.scope.chain()):
                self._classes[info.qualname] = [f"{info.qualname}.{m}" for m in info.methods]

    def _unit_key(self, scope) -> str | None:
        """A function's unit: the outermost function around it (a module-level function or
        a method of a module-level class); a class body or module code is no function unit."""
        chain = list(scope.chain())
        outer = None
        for i, s in enumerate(chain):
            if s.kind == FUNCTION:
                outer = i
        if outer is None:
            return None
        fn = chain[outer]
        classes = [s.name for s in reversed(chain[outer + 1:]) if s.kind == CLASS]
        if not classes:
            self._functions.add(fn.name)
        return ".".join([*classes, fn.name])

    def _site_unit(self, site) -> _Unit | None:
        scope = site.scope
        key = None
        for s in scope.chain():
            if s.kind == FUNCTION:
                key = self._fn_key.get(s.node)
        if key is None:
            if any(s.kind == CLASS for s in scope.chain()):
                return None
            key = self._top_keys.get(site.top)
            if key is None:
                return None
        unit = self.units.get(key)
        if unit is None:
            unit = self.units[key] = _Unit(key)
        return unit

    def _unit_loop(self, site, unit: _Unit) -> _Loop | None:
        """The unit's outermost loop around ``site`` (loops outside the unit do not count)."""
        for loop in site.all_loops:
            if self._loop_in_unit(loop, unit):
                found = unit.loops.get(loop.node)
                if found is None:
                    found = unit.loops[loop.node] = _Loop()
                return found
        return None

    def _loop_in_unit(self, loop, unit: _Unit) -> bool:
        if unit.key.startswith("<"):
            return loop.top == int(unit.key[unit.key.index(":") + 1:-1]) and not any(
                s.kind in (FUNCTION, CLASS) for s in loop.scope.chain())
        return any(self._fn_key.get(s.node) == unit.key for s in loop.scope.chain() if s.kind == FUNCTION)

    def _collect(self) -> None:
        model, graph, training = self.model, self.graph, self.training
        backward = set(training.sites.backward)
        step = {site for site, _ in training.sites.step}
        fit = set(training.sites.fit)
        self.uses: dict[str, str] = {}  # generator -> first call drawing from it
        self.file_seeds: set[str] = set()
        for site in model.calls:
            call = site.node
            func = call.func
            qualified = model.qualified_name(func)
            imported = qualified is not None and model.is_imported(func)
            if imported:
                use = random_use(qualified)
                if use is not None:
                    if use not in self.uses and not self._incidental(call):
                        self.uses[use] = "np.random." + qualified[13:] if use == NUMPY else qualified
                    continue
            unit = self._site_unit(site)
            if unit is None:
                continue
            loop = self._unit_loop(site, unit)
            if site in backward:
                unit.backward = True
                if loop is not None:
                    loop.backward = True
            elif site in step:
                unit.step = True
                if loop is not None:
                    loop.step = True
            elif site in fit:
                unit.fit = True
            if imported:
                if qualified in ENGINES and call.args:
                    # Engine(process_function): the function runs once per batch, as a loop body.
                    unit.loops[call] = _Loop(callees=graph.resolve(call.args[0].value, site.scope, call))
                gens = known_generators(qualified)
                if gens is None:
                    unit.imported.add(qualified)
                elif gens:
                    unit.seeds |= gens
                    self.file_seeds |= gens
                callees = graph.references(site)
            else:
                callees = graph.targets(site) + graph.references(site)
                name = func.value if isinstance(func, cst.Name) else func.attr.value if isinstance(func, cst.Attribute) else ""
                if seedish(name) and not (isinstance(func, cst.Attribute) and name in _OBJECT_SEED_METHODS) \
                        and not graph.targets(site):
                    unit.unresolved_seedish = True
            unit.callees.extend(callees)
            if loop is not None:
                loop.callees.extend(callees)

    def _incidental(self, call: cst.Call) -> bool:
        """A draw that picks a port, a seed, a run id or a name (``port = random.randint(..)``,
        ``str(random.random())``, ``f"{random.randint(..)}"``): not training randomness, and
        seeding it would even be wrong."""
        for anc in self.ctx.ancestors(call):
            if isinstance(anc, (cst.FormattedStringExpression, cst.SimpleStatementLine, cst.BaseSuite)):
                return isinstance(anc, cst.FormattedStringExpression)
            if isinstance(anc, cst.Call) and isinstance(anc.func, cst.Name) and anc.func.value in ("str", "hex"):
                return True
            if isinstance(anc, cst.Arg) and anc.keyword is not None and _INCIDENTAL.search(anc.keyword.value):
                return True
            if isinstance(anc, (cst.Assign, cst.AnnAssign, cst.AugAssign)):
                targets = [t.target for t in anc.targets] if isinstance(anc, cst.Assign) else [anc.target]
                return any(_INCIDENTAL.search((expr_key(t) or "").rsplit(".", 1)[-1]) for t in targets)
        return False

    # -- per-file conclusions ----------------------------------------------------------
    def _keys(self, nodes) -> list[str]:
        return [k for k in (self._fn_key.get(n) for n in nodes) if k is not None]

    def _trains(self) -> dict[str, bool]:
        """Which units run a training loop (backward + step in a loop, or Lightning fit),
        directly or through same-file functions they call."""
        closure = self.graph.closure
        does_backward = closure(self.training.direct("backward"))
        does_step = closure(self.training.direct("step"))
        trains = {}
        for k, u in self.units.items():
            trains[k] = u.fit or any(
                (loop.backward or any(c in does_backward for c in loop.callees))
                and (loop.step or any(c in does_step for c in loop.callees))
                for loop in u.loops.values())
        callees = {k: self._keys(u.callees) for k, u in self.units.items()}
        changed = True
        while changed:
            changed = False
            for k in self.units:
                if not trains[k] and any(trains.get(c) for c in callees[k]):
                    trains[k] = changed = True
        return trains

    def _reach(self, start) -> list[_Unit]:
        keys = {self._fn_key.get(n) for n in self.graph.reach(
            [c for k in start if k in self.units for c in self.units[k].callees])}
        keys |= set(start)
        return [u for k, u in self.units.items() if k in keys]

    def _store_facts(self) -> None:
        facts: dict[str, Any] = {}
        # Seed helpers of this file, for the files that import them.
        defined = sorted(self._functions | set(self._classes))
        helpers: dict[str, list] = {}
        for key, unit in self.units.items():
            if key.startswith("<"):
                continue
            seeds = set(unit.seeds) | (set(ALL_GENERATORS) if unit.unresolved_seedish else set())
            imported = sorted(q for q in unit.imported if q.split(".")[0] not in _EXTERNAL_ROOTS)
            local = sorted(set(self._keys(unit.callees)) - {key})
            if seeds or imported or local:
                helpers[key] = [sorted(seeds), imported, local]
        classes = {}
        for cls, methods in self._classes.items():
            info = self.model.class_named(cls)
            ctors = self._keys(self.graph.constructors(info)) if info is not None else []
            helpers.setdefault(cls, [[], [], ctors])  # what cls(...) runs
            classes[cls] = methods + [f"{base.qualname}.{m}" for base in (self.model.mro(info)[1:] if info else ())
                                      for m in base.methods]
        if defined:
            # A defined name absent from ``helpers`` seeds nothing and calls nothing imported.
            facts["defined"] = defined
            facts["helpers"] = helpers
            facts["classes"] = classes
        # Seeding at import time (module-level code): importing this module seeds.
        on_import: set[str] = set()
        for key in self._order:
            unit = self.units.get(key)
            if unit is not None and key.startswith("<top"):
                on_import |= unit.seeds | (set(ALL_GENERATORS) if unit.unresolved_seedish else set())
        if on_import:
            facts["on_import"] = sorted(on_import)
        entry = self._entry()
        if entry is not None:
            facts["entry"] = entry
        if facts:
            self.ctx.facts[self.code] = facts

    def _entry(self) -> dict[str, Any] | None:
        if not self._order:
            return None
        trains = self._trains()
        first = next((k for k in self._order if trains.get(k)), None)
        if first is None:
            return None
        # The main block: the reported place whenever it trains; else the first training
        # top-level statement.
        main = next((k for k in self._order if k.startswith("<main") and trains.get(k)), None)
        at = main or first
        seeds: set[str] = set(self.file_seeds) - {TORCH}
        imported: set[str] = set()
        for unit in self._reach(self._order):
            seeds |= unit.seeds
            if unit.unresolved_seedish:
                seeds |= set(ALL_GENERATORS)
            imported |= unit.imported
        needs = [g for g in ALL_GENERATORS if g not in seeds and (g == TORCH or g in self.uses)]
        if not needs:
            return None
        return {
            "span": self._place(at).to_json(),
            "needs": needs,
            "uses": {g: self.uses[g] for g in needs if g in self.uses},
            "calls": sorted(imported),
        }

    def _place(self, key: str) -> Span:
        """Where an entry unit's statement is (the test
        of a main guard). Needed before the project pass knows whether it is reported, so it
        comes from CPython's tree the engine already has (``ctx.semantic.ast_tree``), far
        cheaper than LibCST's positions; ``ctx.position`` is the fallback."""
        index = int(key[key.index(":") + 1:-1])
        tree = self.ctx.semantic.ast_tree
        try:
            if tree is None:
                raise ValueError("no ast")
            j = sum(len(st.body) if isinstance(st, cst.SimpleStatementLine) else 1 for st in self.ctx.module.body[:index])
            node: ast.AST = tree.body[j]
            if key.startswith("<main"):
                if not isinstance(node, ast.If):
                    raise ValueError("statement mismatch")
                node = node.test
            lines = self.ctx.text.splitlines()

            def col(lineno: int, offset: int) -> int:  # ast offsets are UTF-8 bytes
                return len(lines[lineno - 1].encode("utf-8")[:offset].decode("utf-8", "replace")) + 1

            return Span(node.lineno, col(node.lineno, node.col_offset), node.end_lineno, col(node.end_lineno, node.end_col_offset))
        except (ValueError, IndexError, TypeError):
            return self.ctx.span(self._entry_nodes[key])

    # -- project pass ------------------------------------------------------------------
    @classmethod
    def check_project(cls, project, options: dict[str, Any]) -> Iterable[Finding]:
        findings = []
        for record in project.records:
            facts = record.facts.get(cls.code)
            entry = facts.get("entry") if facts else None
            if not entry:
                continue
            needs = set(entry["needs"])
            resolver = _Resolver(project)
            for qualified in set(record.imports.values()):
                if not needs:
                    break
                needs -= resolver.on_import(qualified, record)
            for qualified in entry["calls"]:
                if not needs:
                    break
                needs -= resolver.generators(qualified, record)
            for message in messages(needs, entry.get("uses", {})):
                findings.append(Finding.at(cls, record.path, Span.from_json(entry["span"]), message))
        return findings


def messages(needs: set[str], uses: dict[str, str]) -> list[str]:
    out = []
    if TORCH in needs:
        out.append(
            "training entry point never seeds torch, so weight init, dropout and shuffling differ on "
            "every run and runs cannot be reproduced or compared; call torch.manual_seed(seed) (or "
            "lightning's seed_everything) before building the model"
        )
    unseeded = [g for g in (RANDOM, NUMPY) if g in needs and g in uses]
    if unseeded:
        used = " and ".join(uses[g] for g in unseeded)
        names = " or ".join("Python's random" if g == RANDOM else "numpy's global generator" for g in unseeded)
        calls = " and ".join("random.seed(seed)" if g == RANDOM else "np.random.seed(seed)" for g in unseeded)
        out.append(
            f"uses {used} but never seeds {names}, so shuffling/augmentation/sampling differs on every "
            f"run; call {calls} next to torch.manual_seed(seed)"
        )
    return out


class _Resolver:
    """What an imported call seeds, looked up in the other files' facts."""

    def __init__(self, project) -> None:
        self.project = project
        self.seen: set[tuple[str, str]] = set()

    def generators(self, qualified: str, importer, depth: int = 0) -> set[str]:
        known = known_generators(qualified)
        if known is not None:
            return known
        fallback = set(ALL_GENERATORS) if seedish(qualified.rsplit(".", 1)[-1]) else set()
        if depth > 12:
            return fallback
        found = self.project.resolve_symbol(qualified, importer)
        if found is None:
            return fallback
        record, name = found
        head, dot, rest = name.partition(".")
        if head in record.imports:  # re-exported from a module outside the project
            return self.generators(record.imports[head] + dot + rest, record, depth + 1)
        facts = record.facts.get("TL006")
        if not record.parsed or facts is None or "defined" not in facts:
            return fallback
        if head not in facts["defined"]:
            return fallback  # an alias, variable or something else torchlint cannot see
        if rest:
            # A method (or attribute) of a class defined there: its own method, one it
            # inherits from a same-file base, or something torchlint cannot see.
            members = facts["classes"].get(head, ())
            suffix = "." + name.rsplit(".", 1)[-1]
            keys = [k for k in members if k == name or k.endswith(suffix)]
            if not keys:
                return fallback
            out: set[str] = set()
            for k in keys:
                out |= self._unit(record, k, depth)
            return out
        return self._unit(record, name, depth)

    def on_import(self, qualified: str, importer) -> set[str]:
        """What importing ``qualified`` (a module, or a name from one) seeds at import time."""
        if known_generators(qualified) is not None:
            return set()
        found = self.project.resolve_module(qualified, importer)
        if found is None:
            symbol = self.project.resolve_symbol(qualified, importer)
            found = symbol[0] if symbol is not None else None
        if found is None or found is importer:
            return set()
        facts = found.facts.get("TL006") or {}
        return set(facts.get("on_import", ()))

    def _unit(self, record, key: str, depth: int) -> set[str]:
        out: set[str] = set()
        stack = [key]
        helpers = record.facts["TL006"]["helpers"]
        while stack:
            k = stack.pop()
            if (record.path, k) in self.seen:
                continue
            self.seen.add((record.path, k))
            info = helpers.get(k)
            if info is None:
                continue
            seeds, imported, local = info
            out |= set(seeds)
            for q in imported:
                if len(out) == len(ALL_GENERATORS):
                    return out
                out |= self.generators(q, record, depth + 1)
            stack.extend(local)
        return out

