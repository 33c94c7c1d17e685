"""TL006 missing-seed beyond the embedded cases: seed helpers in other files, single-file
linting, message text, facts, fixtures."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from torchlint.engine import analyze_source
from torchlint.checks.tl006_missing_seed import NEVER_SEEDS_TORCH
from torchlint.testing import lint_snippet, lint_tree

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"

TRAIN_LOOP = """
def train(model, loader, optimizer):
    for x, y in loader:
        loss = model(x)
        loss.backward()
        optimizer.step()
"""


def train_file(header: str, seed_call: str) -> str:
    """A training script: ``header`` (imports), then the loop, then a main block that calls
    ``seed_call`` (if any) and trains; see ``main_line``."""
    body = f"{header}\n{TRAIN_LOOP}\n\nif __name__ == '__main__':\n"
    if seed_call:
        body += f"    {seed_call}\n"
    body += "    train(model, loader, optimizer)\n"
    return body


def main_line(code: str) -> int:
    return next(i for i, line in enumerate(code.splitlines(), 1) if line.startswith("if __name__"))


def tl006(files: dict[str, str]) -> list:
    return lint_tree(files, select=["TL006"])


def lines_and_paths(findings) -> list[tuple[str, int]]:
    return sorted((f.path, f.line) for f in findings)


# -- seed helpers in other project files ---------------------------------------------------

SEED_UTILS = """
    import torch

    def set_seed(seed):
        torch.manual_seed(seed)

    def fix_everything(seed):
        torch.cuda.manual_seed_all(seed)

    def numpy_only(seed):
        import numpy as np
        np.random.seed(seed)
"""


def test_relative_import_of_project_seed_helper_is_seeding():
    files = {"proj/utils.py": SEED_UTILS, "proj/train.py": train_file("from .utils import set_seed", "set_seed(0)")}
    assert tl006(files) == []


def test_absolute_import_of_project_seed_helper_is_seeding():
    files = {"proj/utils.py": SEED_UTILS, "proj/train.py": train_file("from utils import set_seed", "set_seed(0)")}
    assert tl006(files) == []


def test_module_import_of_helper_not_named_like_a_seeder_is_resolved():
    files = {"proj/utils.py": SEED_UTILS, "proj/train.py": train_file("import utils", "utils.fix_everything(0)")}
    assert tl006(files) == []
    # The same call when utils is not linted: the name says nothing, so it is a finding.
    alone = tl006({"proj/train.py": train_file("import utils", "utils.fix_everything(0)")})
    assert [f.line for f in alone] == [10]
    assert "never seeds torch" in alone[0].message


def test_project_helper_that_only_seeds_numpy_is_a_finding():
    files = {"proj/utils.py": SEED_UTILS, "proj/train.py": train_file("from utils import numpy_only", "numpy_only(0)")}
    findings = tl006(files)
    assert lines_and_paths(findings) == [("proj/train.py", 10)]
    assert "never seeds torch" in findings[0].message


def test_project_helper_named_set_seed_that_only_seeds_numpy_beats_the_name_fallback():
    utils = """
        import numpy as np

        def set_seed(seed):
            np.random.seed(seed)
    """
    train = train_file("from utils import set_seed", "set_seed(0)")
    assert lines_and_paths(tl006({"proj/utils.py": utils, "proj/train.py": train})) == [("proj/train.py", 10)]
    # Linting train.py alone: set_seed cannot be seen, its name counts as seeding.
    assert tl006({"proj/train.py": train}) == []


def test_single_file_imported_set_seed_is_not_a_finding():
    assert lint_snippet(train_file("from utils import set_seed", "set_seed(0)"), select=["TL006"], path="train.py") == []
    assert lint_snippet(train_file("from utils import seed_everything", "seed_everything(1)"), select=["TL006"]) == []


def test_single_file_unknown_helper_not_named_like_a_seeder_is_a_finding():
    findings = lint_snippet(train_file("from utils import setup", "setup()"), select=["TL006"], path="train.py")
    assert [f.line for f in findings] == [10]


def test_seed_helper_reached_transitively_through_project_files():
    seeding = """
        import torch

        def init_rng(seed):
            torch.manual_seed(seed)
    """
    setup_ok = """
        from .seeding import init_rng

        def setup(cfg):
            configure_logging(cfg)
            init_rng(cfg.seed)

        def configure_logging(cfg):
            pass
    """
    setup_bad = """
        def setup(cfg):
            configure_logging(cfg)

        def configure_logging(cfg):
            pass
    """
    train = train_file("from proj.common import setup", "setup(cfg)")
    assert tl006({"proj/seeding.py": seeding, "proj/common.py": setup_ok, "proj/train.py": train}) == []
    assert lines_and_paths(tl006({"proj/seeding.py": seeding, "proj/common.py": setup_bad, "proj/train.py": train})) == [
        ("proj/train.py", 10)
    ]


def test_seed_helper_re_exported_from_a_package_init():
    files = {
        "proj/__init__.py": "from .seeding import seed_all\n",
        "proj/seeding.py": "import torch\n\ndef seed_all(s):\n    torch.manual_seed(s)\n",
        "train.py": train_file("from proj import seed_all", "seed_all(0)"),
    }
    assert tl006(files) == []
    files["proj/seeding.py"] = "import random\n\ndef seed_all(s):\n    random.seed(s)\n"
    assert lines_and_paths(tl006(files)) == [("train.py", 10)]


def test_re_export_of_a_library_seeder_from_a_project_module():
    files = {
        "proj/utils.py": "from accelerate.utils import set_seed as seed_run\n",
        "proj/train.py": train_file("from proj.utils import seed_run", "seed_run(0)"),
    }
    assert tl006(files) == []


def test_imported_class_whose_constructor_seeds():
    recipe = """
        import torch

        class Recipe:
            def __init__(self, cfg):
                torch.manual_seed(cfg.seed)

            def report(self):
                torch.cuda.manual_seed(0)
    """
    assert tl006({"proj/recipe.py": recipe, "proj/train.py": train_file("from recipe import Recipe", "Recipe(cfg)")}) == []
    # A method that seeds is not run by the constructor.
    recipe_late = recipe.replace("torch.manual_seed(cfg.seed)", "self.cfg = cfg")
    findings = tl006({"proj/recipe.py": recipe_late, "proj/train.py": train_file("from recipe import Recipe", "Recipe(cfg)")})
    assert lines_and_paths(findings) == [("proj/train.py", 10)]


def test_static_method_seeder_of_an_imported_class():
    seeder = """
        import torch

        class Seeder:
            @staticmethod
            def everything(seed):
                torch.manual_seed(seed)

            @staticmethod
            def nothing(seed):
                return seed
    """
    ok = train_file("from helpers import Seeder", "Seeder.everything(0)")
    bad = train_file("from helpers import Seeder", "Seeder.nothing(0)")
    assert tl006({"proj/helpers.py": seeder, "proj/train.py": ok}) == []
    assert lines_and_paths(tl006({"proj/helpers.py": seeder, "proj/train.py": bad})) == [("proj/train.py", 10)]


def test_project_module_that_seeds_when_imported():
    config = "import torch\n\nSEED = 0\ntorch.manual_seed(SEED)\n"
    files = {"proj/config.py": config, "proj/train.py": train_file("import config", "")}
    assert tl006(files) == []
    files = {"proj/config.py": "from config_base import *\nSEED = 0\n", "proj/train.py": train_file("from config import SEED", "")}
    assert lines_and_paths(tl006(files)) == [("proj/train.py", 10)]
    # Seeding inside a function of the imported module does not happen on import.
    files = {"proj/config.py": "import torch\n\ndef f():\n    torch.manual_seed(0)\n", "proj/train.py": train_file("import config", "")}
    assert lines_and_paths(tl006(files)) == [("proj/train.py", 10)]


def test_library_modules_are_never_flagged_and_helpers_defined_elsewhere_do_not_seed_them():
    files = {"proj/loop.py": TRAIN_LOOP, "proj/utils.py": SEED_UTILS}
    assert tl006(files) == []


# -- random / numpy -----------------------------------------------------------------------

def test_random_message_names_the_call_and_the_fix():
    code = train_file("import random\nimport torch", "torch.manual_seed(0)") + "    random.shuffle(loader)\n"
    findings = lint_snippet(code, select=["TL006"])
    assert len(findings) == 1
    message = findings[0].message
    assert "uses random.shuffle" in message
    assert "never seeds Python's random" in message
    assert "random.seed(seed)" in message
    assert "torch" not in message.split(";")[0].replace("torch.manual_seed", "")


def test_random_and_numpy_unseeded_each_reported_at_its_draw_and_torch_at_the_main_guard():
    code = train_file("import random\nfrom numpy.random import permutation", "") + (
        "    random.choice(loader)\n    permutation(10)\n"
    )
    findings = sorted(lint_snippet(code, select=["TL006"]), key=lambda f: f.line)
    assert [(f.line, f.column, f.end_line, f.end_column) for f in findings] == [
        (11, 1, 11, 27), (13, 5, 13, 26), (14, 5, 14, 20)]
    torch_msg, rand_msg, np_msg = (f.message for f in findings)
    assert torch_msg.startswith("training entry point never seeds torch")
    assert rand_msg.startswith("uses random.choice but never seeds Python's random,")
    assert rand_msg.endswith("call random.seed(seed) next to torch.manual_seed(seed)")
    assert np_msg.startswith("uses np.random.permutation but never seeds numpy's global generator,")
    assert np_msg.endswith("call np.random.seed(seed) next to torch.manual_seed(seed)")


def test_project_helper_seeding_random_numpy_and_torch_clears_both_messages():
    utils = """
        import random
        import numpy as np
        import torch

        def seed_everything(seed):
            random.seed(seed)
            np.random.seed(seed)
            torch.manual_seed(seed)
    """
    train = train_file("import random\nfrom utils import seed_everything", "seed_everything(0)") + "    random.shuffle(loader)\n"
    assert tl006({"proj/utils.py": utils, "proj/train.py": train}) == []
    torch_only = utils.replace("random.seed(seed)\n", "pass\n", 1)
    assert "np.random.seed(seed)" in torch_only and "    random.seed" not in torch_only
    findings = tl006({"proj/utils.py": torch_only, "proj/train.py": train})
    assert len(findings) == 1 and "never seeds Python's random" in findings[0].message


def test_random_seeded_only_in_worker_init_fn_counts():
    code = """
        import random
        import torch

        def seed_worker(worker_id):
            random.seed(torch.initial_seed() % 2**32)

        def train(model, ds, optimizer):
            for x in torch.utils.data.DataLoader(ds, worker_init_fn=seed_worker):
                random.shuffle(x)
                model(x).backward()
                optimizer.step()

        if __name__ == "__main__":
            torch.manual_seed(0)
            train(model, ds, optimizer)
    """
    assert lint_snippet(code, select=["TL006"]) == []


# -- entry points -------------------------------------------------------------------------

def test_main_guard_with_extra_condition_is_the_entry_point():
    code = "import os\n" + TRAIN_LOOP + (
        "\nif __name__ == '__main__' and not os.environ.get('CI'):\n    train(model, loader, optimizer)\n"
    )
    findings = lint_snippet(code, select=["TL006"])
    # One line, from the ``if`` (not the test expression) to the end of the line.
    assert [(f.line, f.column, f.end_line, f.end_column) for f in findings] == [(9, 1, 9, 56)]


def test_ignite_engine_driving_a_nested_training_step():
    code = """
        from ignite.engine import Engine

        def run(model, loader, optimizer):
            def train_step(engine, batch):
                loss = model(batch)
                loss.backward()
                optimizer.step()

            trainer = Engine(train_step)
            trainer.run(loader, max_epochs=3)

        if __name__ == "__main__":
            run(model, loader, optimizer)
    """
    assert [f.line for f in lint_snippet(code, select=["TL006"])] == [13]
    seeded = code.replace("def run(model, loader, optimizer):", "def run(model, loader, optimizer):\n    torch.manual_seed(0)")
    assert lint_snippet("import torch\n" + seeded, select=["TL006"]) == []


def test_lightning_fit_from_lightning_pytorch_import():
    code = """
        from lightning.pytorch import Trainer, seed_everything

        def main():
            trainer = Trainer(max_epochs=1)
            trainer.fit(model)

        if __name__ == "__main__":
            main()
    """
    assert [f.line for f in lint_snippet(code, select=["TL006"])] == [8]
    assert lint_snippet(code.replace("    main()", "    seed_everything(7, workers=True)\n            main()"), select=["TL006"]) == []


def test_noqa_on_the_entry_point_line_suppresses():
    code = train_file("", "").replace("if __name__ == '__main__':", "if __name__ == '__main__':  # noqa: TL006")
    assert lint_snippet(code, select=["TL006"]) == []


def test_facts_are_json_serialisable_and_describe_the_file():
    code = train_file("import random\nfrom utils import prepare", "prepare()") + "    random.random()\n"
    result = analyze_source("train.py", code.encode(), frozenset({"TL006"}))
    facts = json.loads(json.dumps(dict(result.record.facts)))["TL006"]
    entry = facts["entry"]
    assert entry["at"] == [11, 1, 11, 27]
    assert entry["trains"] is True
    assert entry["needs"] == ["torch", "random"]
    assert entry["uses"] == {"random": ["random.random", [14, 5, 14, 20]]}
    assert entry["calls"] == ["utils.prepare"]
    assert "train" in facts["defined"]
    helper = analyze_source("utils.py", textwrap.dedent(SEED_UTILS).encode(), frozenset({"TL006"})).record.facts["TL006"]
    assert helper["helpers"]["set_seed"][0] == ["torch"]
    assert helper["helpers"]["numpy_only"][0] == ["numpy"]
    assert "entry" not in helper


# -- fixtures -----------------------------------------------------------------------------

def _fixture(name: str) -> dict[str, str]:
    root = FIXTURES / name
    return {p.relative_to(FIXTURES).as_posix(): p.read_text() for p in sorted(root.rglob("*.py"))}


def test_buggy_fixture_reports_torch_at_the_main_guard_and_random_at_its_draw():
    findings = lint_tree(_fixture("buggy_project"), select=["TL006"], dedent=False)
    findings.sort(key=lambda f: f.line)
    assert [(f.path, f.line) for f in findings] == [("buggy_project/train.py", 16), ("buggy_project/train.py", 45)]
    assert findings[0].message.startswith("uses random.shuffle but never seeds Python's random")
    assert findings[1].message.startswith("training entry point never seeds torch")


def test_clean_fixture_is_clean():
    assert lint_tree(_fixture("clean_project"), select=["TL006"], dedent=False) == []


# -- the training loop in another linted file (issue 12) ------------------------------------

ENGINE = """
    import torch

    def train_one_epoch(model, loader, optimizer):
        for x, y in loader:
            optimizer.zero_grad()
            model(x).sum().backward()
            optimizer.step()

    class Trainer:
        def __init__(self, model, optimizer):
            self.model, self.optimizer = model, optimizer

        def train(self, dataset):
            torch.manual_seed(42)
            for x in dataset:
                self.model(x).sum().backward()
                self.optimizer.step()
"""


def test_entry_point_calling_a_training_function_of_another_file_is_a_training_entry_point():
    main = """
        import torch
        from engine import train_one_epoch

        def main():
            model = torch.nn.Linear(2, 2)
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            for epoch in range(3):
                train_one_epoch(model, loader, opt)

        if __name__ == "__main__":
            main()
    """
    findings = tl006({"engine.py": ENGINE, "main.py": main})
    assert [(f.path, f.line, f.column, f.message) for f in findings] == [
        ("main.py", 11, 1, NEVER_SEEDS_TORCH)]
    seeded = main.replace("def main():\n", "def main():\n            torch.manual_seed(0)\n")
    assert tl006({"engine.py": ENGINE, "main.py": seeded}) == []


def test_project_trainer_method_that_seeds_leaves_only_the_earlier_random_split():
    main = """
        import torch
        from torch.utils.data import random_split
        from engine import Trainer

        def main():
            train_ds, val_ds = random_split(data, [90, 10])
            model = torch.nn.Linear(2, 2)
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            Trainer(model, opt).train(train_ds)

        if __name__ == "__main__":
            main()
    """
    findings = tl006({"engine.py": ENGINE, "main.py": main})
    assert [(f.path, f.line, f.column, f.end_column) for f in findings] == [("main.py", 7, 24, 52)]
    assert findings[0].message == (
        "random_split without a generator runs before anything seeds torch (only `engine.Trainer.train` seeds "
        "it, later), so the train/validation split differs on every run and on every rank; pass "
        "generator=torch.Generator().manual_seed(seed) or seed torch before splitting")
    with_generator = main.replace("[90, 10])", "[90, 10], generator=torch.Generator().manual_seed(0))")
    assert tl006({"engine.py": ENGINE, "main.py": with_generator}) == []
    # Without the project's trainer the entry point hands training to something unseen.
    alone = tl006({"main.py": main})
    assert [f.message.split(" (not linted)")[0] for f in alone] == [
        "training entry point builds an optimizer or a shuffling DataLoader and hands training to `engine.Trainer`"]


def test_script_subclass_of_a_project_trainer_that_seeds_leaves_the_earlier_random_split():
    # pytorch_accelerated examples: ``class TrainerWithMetrics(Trainer)`` defined in the script.
    main = """
        import torch
        from torch.utils.data import random_split
        from engine import Trainer

        class TrainerWithMetrics(Trainer):
            pass

        def main():
            train_ds, val_ds = random_split(data, [90, 10])
            model = torch.nn.Linear(2, 2)
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            TrainerWithMetrics(model, opt).train(train_ds)

        if __name__ == "__main__":
            main()
    """
    findings = tl006({"engine.py": ENGINE, "main.py": main})
    assert [(f.path, f.line, f.column) for f in findings] == [("main.py", 10, 24)]
    assert findings[0].message.startswith(
        "random_split without a generator runs before anything seeds torch (only `engine.Trainer.train` seeds it")


SEEDING_BASE = {
    "pkg/__init__.py": "",
    "pkg/dutils.py": "import torch\n\ndef set_determinism(seed):\n    if seed is not None:\n        torch.manual_seed(seed)\n",
    "pkg/engine.py": ("from pkg import dutils as dist_utils\n\nclass Engine:\n    def __init__(self, config):\n"
                      "        dist_utils.set_determinism(config.seed)\n"),
}


def test_base_class_in_another_file_that_seeds_in_its_constructor():
    # torchtitan forge example_train.py: ``super().__init__(config)`` of a project Engine that seeds.
    train = """
        import torch
        from pkg.engine import Engine

        class Trainer(Engine):
            def __init__(self, config):
                super().__init__(config)
                self.model = torch.nn.Linear(4, 2)
                self.opt = torch.optim.SGD(self.model.parameters(), lr=config.lr)

            def train(self, batches):
                for x in batches:
                    self.opt.zero_grad()
                    self.model(x).sum().backward()
                    self.opt.step()

        if __name__ == "__main__":
            Trainer(config).train(batches)
    """
    assert tl006({**SEEDING_BASE, "train.py": train}) == []
    # The inherited constructor seeds too.
    inherited = train.replace("def __init__(self, config):\n                super().__init__(config)\n",
                              "def setup(self, config):\n")
    assert tl006({**SEEDING_BASE, "train.py": inherited}) == []
    # The class handed to a launcher function (torchtitan forge: ``main(Trainer)``): only its
    # ``super().__init__`` says what the base seeds.
    launched = train.replace("Trainer(config).train(batches)", "main(Trainer)").replace(
        "if __name__", "def main(cls):\n            cls(config).train(batches)\n\n        if __name__")
    assert tl006({**SEEDING_BASE, "train.py": launched}) == []
    # A base whose constructor seeds nothing leaves the finding.
    unseeded = {**SEEDING_BASE, "pkg/engine.py": "class Engine:\n    def __init__(self, config):\n        self.c = config\n"}
    findings = tl006({**unseeded, "train.py": train})
    assert [(f.path, f.line, f.message) for f in findings] == [("train.py", 17, NEVER_SEEDS_TORCH)]


def test_python_random_and_numpy_seeded_but_torch_never_through_a_project_helper():
    utils = """
        import random
        import numpy as np

        def seed_all(seed):
            random.seed(seed)
            np.random.seed(seed)
    """
    main = """
        from utils import seed_all
        from engine import train_one_epoch

        if __name__ == "__main__":
            seed_all(0)
            train_one_epoch(model, loader, opt)
    """
    findings = tl006({"engine.py": ENGINE, "utils.py": utils, "main.py": main + "    # optim\n"})
    assert [(f.path, f.line, f.message) for f in findings] == [("main.py", 5, NEVER_SEEDS_TORCH)]


def test_top_level_script_is_reported_at_its_loop_header_only():
    code = (
        "import torch\n"
        "model = torch.nn.Linear(2, 2)\n"
        "opt = torch.optim.Adam(model.parameters())\n"
        "for x in data:  # train\n"
        + "    y = model(x)\n" * 150
        + "    y.sum().backward()\n"
        "    opt.step()\n"
    )
    findings = lint_snippet(code, select=["TL006"])
    assert [(f.line, f.column, f.end_line, f.end_column) for f in findings] == [(4, 1, 4, 24)]


def test_method_inherited_from_a_project_trainer_that_seeds_is_seeding():
    sub = """
        from engine import Trainer

        class CarsTrainer(Trainer):
            pass
    """
    main = """
        import random
        import torch
        from cars import CarsTrainer

        def main():
            random.seed(42)
            model = torch.nn.Linear(2, 2)
            CarsTrainer(model, torch.optim.SGD(model.parameters(), lr=0.1)).train(data)

        if __name__ == "__main__":
            main()
    """
    assert tl006({"engine.py": ENGINE, "cars.py": sub, "main.py": main}) == []
    unseeded = ENGINE.replace("torch.manual_seed(42)", "pass")
    assert [f.line for f in tl006({"engine.py": unseeded, "cars.py": sub, "main.py": main})] == [11]


# -- code a helper's parameter defaults rule out ---------------------------------------------

FACTORY = """
    import torch

    class Engine:
        def __init__(self, step):
            self.step = step

    class DeterministicEngine(Engine):
        def __init__(self, step):
            super().__init__(step)
            torch.manual_seed(0)

    def make_trainer(model, optimizer, device=None, deterministic=False):
        return Engine(model) if not deterministic else DeterministicEngine(model)

    def prepare(seed=None):
        if seed is not None:
            torch.manual_seed(seed)
"""


def factory_call(call: str) -> dict[str, str]:
    return {"proj/factory.py": FACTORY,
            "proj/train.py": train_file("from proj.factory import make_trainer, prepare", call)}


def test_helper_seeding_only_under_a_flag_the_call_leaves_at_its_default_does_not_seed():
    # ignite's create_supervised_trainer(..., deterministic=False) builds DeterministicEngine, which
    # seeds, only when deterministic is passed: its examples call it without and never seed.
    for call in ("make_trainer(model, optimizer)", "make_trainer(model, optimizer, device='cuda')",
                 "prepare()"):
        assert lines_and_paths(tl006(factory_call(call))) == [("proj/train.py", 10)], call


def test_helper_seeding_under_a_flag_the_call_may_pass_seeds():
    for call in ("make_trainer(model, optimizer, deterministic=True)", "make_trainer(model, optimizer, None, True)",
                 "make_trainer(*args)", "make_trainer(model, optimizer, **options)", "prepare(args.seed)",
                 "prepare(seed=0)",
                 # passing the parameter at all counts, even with its default's value: what is passed
                 # across files is not compared
                 "prepare(None)"):
        assert tl006(factory_call(call)) == [], call
