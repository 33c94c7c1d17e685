"""Facts a project pass asks of a file only when it needs them (``Rule.demanded_facts``,
``Project.demand``): TL003's call sites. The ordinary pass gathers none; the project pass
has the run layer analyse again the files that may call a function it decides on, and only
in a project with a forward to decide on."""

from __future__ import annotations

import json
import textwrap

import pytest

from torchlint import pool
from torchlint import engine
from torchlint.checks.tl003_eval_without_no_grad import EvalWithoutNoGrad
from torchlint.engine import analyze_source, demand_facts
from torchlint.testing import lint_tree

INFER = """
    import torch
    def predict(model, x):
        model.eval()
        return model(x)
"""
MAIN = """
    import torch
    from pkg.infer import predict
    def run(model, x):
        with torch.no_grad():
            return predict(model, x)
"""
OTHER = """
    import torch
    def unrelated(a):
        return a.sum()
"""
FILES = {"pkg/infer.py": INFER, "pkg/main.py": MAIN, "pkg/other.py": OTHER}


@pytest.fixture
def demanded(monkeypatch):
    """The paths the run layer analysed again on demand, in order."""
    paths: list[str] = []
    real = engine.demand_facts_of

    def spy(path, data, codes, options=None):
        paths.append(path)
        return real(path, data, codes, options)

    monkeypatch.setattr(engine, "demand_facts_of", spy)
    return paths


def test_ordinary_facts_name_what_calls_could_call_and_hold_no_sites():
    facts = analyze_source("pkg/main.py", textwrap.dedent(MAIN).encode(), frozenset({"TL003"})).record.facts["TL003"]
    assert "sites" not in facts and "signatures" not in facts
    assert {"predict", "no_grad"} <= set(facts["called"])


def test_demanded_facts_are_the_files_sites_and_signatures():
    facts, errors = demand_facts("pkg/main.py", textwrap.dedent(MAIN).encode(), "TL003")
    assert errors == []
    assert facts == {"sites": [["@pkg.infer.predict", None, True, "2:"]], "signatures": {}}


def test_only_files_that_may_call_the_function_are_analysed_again(demanded):
    assert lint_tree(FILES, select=["TL003"], each_alone=False) == []  # protected by main's no_grad
    assert sorted(set(demanded)) == ["pkg/infer.py", "pkg/main.py"]


NAMESAKE = """
    from pkg.elsewhere import predict
    def serve(model, x):
        return predict(model, x)
"""


def test_ordinary_facts_name_the_imported_project_names_calls_may_run():
    facts = analyze_source("pkg/user.py", textwrap.dedent(NAMESAKE).encode(), frozenset({"TL003"})).record.facts["TL003"]
    assert facts["imported"] == ["pkg.elsewhere.predict"]


def test_a_file_calling_a_namesake_imported_from_elsewhere_is_not_analysed_again(demanded):
    # user.py calls a ``predict`` outside no_grad, but pkg.elsewhere's: infer's stays protected,
    # and deciding it needs no sites of user.py.
    files = {**FILES, "pkg/elsewhere.py": OTHER.replace("unrelated", "predict"), "pkg/user.py": NAMESAKE}
    assert lint_tree(files, select=["TL003"], each_alone=False) == []
    assert sorted(set(demanded)) == ["pkg/infer.py", "pkg/main.py"]


def test_a_file_importing_the_function_itself_is_analysed_again(demanded):
    files = {**FILES, "pkg/user.py": NAMESAKE.replace("pkg.elsewhere", "pkg.infer")}
    (finding,) = lint_tree(files, select=["TL003"], each_alone=False)  # user.py runs it with grad
    assert (finding.path, finding.line) == ("pkg/infer.py", 5)
    assert "pkg/user.py" in demanded


def test_nothing_is_analysed_again_without_a_forward_to_decide_on(demanded):
    files = {**FILES, "pkg/infer.py": "import torch\ndef predict(model, x):\n    return model(x)\n"}
    assert lint_tree(files, select=["TL003"], each_alone=False) == []
    assert demanded == []


def test_a_caller_that_cannot_be_analysed_again_is_a_use_nobody_can_see(monkeypatch):
    real = engine.demand_facts_of
    monkeypatch.setattr(engine, "demand_facts_of", lambda path, data, codes, *rest:
                        {c: (None, []) for c in codes} if path == "pkg/main.py" else real(path, data, codes, *rest))
    (finding,) = lint_tree(FILES, select=["TL003"], each_alone=False)
    assert (finding.path, finding.line, finding.rule) == ("pkg/infer.py", 5, "TL003")


def test_a_rule_failing_on_demand_is_reported_and_the_run_goes_on(monkeypatch):
    def fails(self):
        raise ValueError("no sites today")

    monkeypatch.setattr(EvalWithoutNoGrad, "demanded_facts", fails)
    with pytest.raises(AssertionError, match="rule raised: TL003 on pkg/infer.py: ValueError: no sites today"):
        lint_tree(FILES, select=["TL003"], each_alone=False)


def test_demand_through_the_command_line_cache_and_pool(project, run):
    """Cold, warm (the project pass remembered), and after the caller drops its no_grad (the
    caller is analysed again on demand): the same answers as the whole-file analysis gave."""
    for path, text in FILES.items():
        project.write(path, text)
    for i in range(pool.MIN_FILES_FOR_POOL):  # enough files for the pool
        project.write(f"pkg/m{i}.py", OTHER)
    args = ("check", "--select", "TL003", "--format", "json", "-j", "2", "--cache-dir", str(project.root / ".c"), ".")
    assert run(*args)[0] == 0
    assert run(*args)[0] == 0
    project.write("pkg/main.py", MAIN.replace("torch.no_grad()", "open('log.txt')"))
    code, out, _ = run(*args)
    assert code == 1
    assert [(f["path"], f["line"]) for f in json.loads(out)] == [("pkg/infer.py", 5)]


def test_a_remembered_project_pass_holds_only_while_the_files_it_demanded_are_unchanged(project, run):
    """The project pass's memo is keyed by what it reads of each record; facts it demanded of a
    file come from that file's bytes, so a change there reruns it even where the record reads
    the same (main.py still calls predict and no_grad, but no longer under it)."""
    moved = MAIN.replace("            return predict(model, x)", "            pass\n        return predict(model, x)")
    before = analyze_source("pkg/main.py", textwrap.dedent(MAIN).encode(), frozenset({"TL003"}))
    after = analyze_source("pkg/main.py", textwrap.dedent(moved).encode(), frozenset({"TL003"}))
    assert before.record.project_digest() == after.record.project_digest()
    for path, text in FILES.items():
        project.write(path, text)
    args = ("check", "--select", "TL003", "--format", "json", "--cache-dir", str(project.root / ".c"), ".")
    assert run(*args)[0] == 0
    project.write("pkg/main.py", moved)
    code, out, _ = run(*args)
    assert code == 1 and [(f["path"], f["line"]) for f in json.loads(out)] == [("pkg/infer.py", 5)]


def test_demanded_facts_are_cached_with_the_files_bytes(project, run, demanded):
    """A run whose project pass must run again (another file changed) reads the demanded
    facts of unchanged files from the cache; a changed file is analysed again."""
    for path, text in FILES.items():
        project.write(path, text)
    args = ("check", "--select", "TL003", "--cache-dir", str(project.root / ".c"), ".")
    assert run(*args)[0] == 0
    assert sorted(demanded) == ["pkg/infer.py", "pkg/main.py"]
    demanded.clear()
    project.write("pkg/other.py", textwrap.dedent(OTHER) + "\nx = 1\n")  # the project pass runs again
    assert run(*args)[0] == 0
    assert demanded == []
    project.write("pkg/main.py", textwrap.dedent(MAIN) + "\ny = 2\n")
    assert run(*args)[0] == 0
    assert demanded == ["pkg/main.py"]


# TL011: the mode-dependent layers of a project class, asked of the file defining it only when
# a pending finding evaluates that class.
MODELS = """
    import torch.nn as nn
    class Plain(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(8, 2)
    class Dropped(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Sequential(nn.Linear(8, 2), nn.Dropout(0.1))
"""
OTHER_MODELS = """
    import torch.nn as nn
    class Unused(nn.Module):
        def __init__(self):
            super().__init__()
            self.drop = nn.Dropout(0.5)
"""
EVALUATE = """
    import torch
    from pkg.models import {cls}
    model = {cls}()
    model.load_state_dict(torch.load("net.pt"))
    with torch.no_grad():
        for x, y in test_loader:
            model(x)
"""
TRAIN_ONLY = """
    import torch
    from pkg.models import Dropped
    model = Dropped()
    for x, y in loader:
        model(x).sum().backward()
"""


def test_tl011_keeps_no_class_layers_on_the_ordinary_pass():
    result = analyze_source("pkg/models.py", textwrap.dedent(MODELS).encode(), frozenset({"TL011"}))
    assert result.record.facts.get("TL011") is None
    facts, errors = demand_facts("pkg/models.py", textwrap.dedent(MODELS).encode(), "TL011")
    assert errors == []
    assert facts == {"Plain": [False, []], "Dropped": [True, []]}


@pytest.mark.parametrize("cls, found", [("Dropped", True), ("Plain", False)])
def test_tl011_asks_only_the_file_defining_the_evaluated_class(demanded, cls, found):
    files = {"pkg/models.py": MODELS, "pkg/other_models.py": OTHER_MODELS,
             "pkg/evaluate.py": EVALUATE.format(cls=cls)}
    findings = lint_tree(files, select=["TL011"], each_alone=False)
    assert [(f.path, f.line) for f in findings] == ([("pkg/evaluate.py", 7)] if found else [])
    assert sorted(set(demanded)) == ["pkg/models.py"]


def test_tl011_asks_nothing_where_nothing_is_evaluated(demanded):
    files = {"pkg/models.py": MODELS, "pkg/other_models.py": OTHER_MODELS, "pkg/train.py": TRAIN_ONLY}
    assert lint_tree(files, select=["TL011"], each_alone=False) == []
    assert demanded == []


# TL009, TL022, TL023: one demand group (their demanded facts come from one ``Outputs`` of the
# file). A model file none of them ran on (its forward ends in a Linear layer: no loss, no
# activation, no threshold in its text) is analysed once for all three.
SCORES = """
    import torch.nn as nn
    class Scores(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(8, 3)
        def forward(self, x):
            return self.fc(x)
"""
SCORED = """
    import torch
    import torch.nn as nn
    from pkg.scores import Scores
    model = Scores()
    scorer = Scores()
    criterion = nn.NLLLoss()
    for x, y in loader:
        loss = criterion(model(x), y)
        hits = (scorer(x) > 0.5).sum()
"""
GROUP = ["TL009", "TL022", "TL023"]


def test_a_demand_group_analyses_a_file_once_for_all_its_rules(demanded):
    files = {"pkg/scores.py": SCORES, "pkg/train.py": SCORED}
    together = lint_tree(files, select=GROUP, each_alone=False)
    assert demanded == ["pkg/scores.py"]
    alone = sorted((f for code in GROUP for f in lint_tree(files, select=[code], each_alone=False)),
                   key=lambda f: f.sort_key)
    assert [(f.rule, f.line, f.message) for f in together] == [(f.rule, f.line, f.message) for f in alone]
    assert {f.rule for f in together} == {"TL022", "TL023"}


def test_a_file_the_group_ran_on_keeps_its_facts_even_empty():
    """So the project pass never analyses it again for them (``ProjectOutputs.facts``)."""
    facts = analyze_source("pkg/a.py", b"import torch\nok = 0.3 > 0.5\n", frozenset(GROUP)).record.facts
    assert facts["TL023"] == {} and "TL009" not in facts and "TL022" not in facts


# The group's demanded facts are cheap where its text pre-check rules it out
# (``Rule.gathers_demanded``): a file parsed for another rule keeps them in its record, so the
# project pass reads them there instead of analysing the file again.
WITH_OTHERS = GROUP + ["TL005"]  # TL005 (unused layer) runs on the model file: its tree is built


def test_a_file_parsed_for_another_rule_gathers_the_groups_demanded_facts():
    data = textwrap.dedent(SCORES).encode()
    result = analyze_source("pkg/scores.py", data, frozenset(WITH_OTHERS))
    assert set(result.record.demanded) == set(GROUP)
    assert not set(result.record.facts) & set(GROUP) and result.findings == [] and result.errors == []
    for code in GROUP:
        assert result.record.demanded[code] == demand_facts("pkg/scores.py", data, code)[0]
    assert "Scores" in result.record.demanded["TL022"]["ends"]


def test_nothing_is_gathered_where_no_rule_builds_the_tree_or_the_rule_ran():
    assert analyze_source("pkg/scores.py", textwrap.dedent(SCORES).encode(), frozenset(GROUP)).record.demanded == {}
    thresholds = b"from pkg.scores import Scores\nmodel = Scores()\nhits = (model(x) > 0.5).sum()\n"
    ran = analyze_source("pkg/hits.py", thresholds, frozenset(GROUP)).record  # TL023 alone ran
    assert set(ran.facts) & set(GROUP) == {"TL023"} and set(ran.demanded) == {"TL009", "TL022"}


def test_gathered_facts_spare_the_analysis_on_demand_and_find_the_same(demanded):
    files = {"pkg/scores.py": SCORES, "pkg/train.py": SCORED}
    gathered = lint_tree(files, select=WITH_OTHERS, each_alone=False)
    assert demanded == []
    asked = lint_tree(files, select=GROUP, each_alone=False)  # the model file analysed again on demand
    assert demanded == ["pkg/scores.py"]
    assert [(f.rule, f.line, f.message) for f in gathered if f.rule in GROUP] == \
        [(f.rule, f.line, f.message) for f in asked]


def test_a_rule_failing_while_gathering_is_not_reported_there_and_is_asked_again(monkeypatch, demanded):
    from torchlint.checks.tl009_activation_before_loss import ActivationBeforeLoss

    def fails(self):
        raise ValueError("nothing to gather")

    monkeypatch.setattr(ActivationBeforeLoss, "finish", fails)
    result = analyze_source("pkg/scores.py", textwrap.dedent(SCORES).encode(), frozenset(WITH_OTHERS))
    assert result.errors == [] and set(result.record.demanded) == {"TL022", "TL023"}
