"""The shared semantic layer, tested directly (torchlint.semantic)."""

from __future__ import annotations

import libcst as cst

from torchlint.context import Dispatcher, FileContext
from torchlint.engine import analyze_source
from torchlint.imports import ImportTable
from torchlint.project import Project
from torchlint.semantic.training import DATA, EPOCH, EVALUATION, TRAINING


def analyses(src: str, path: str = "m.py"):
    module = cst.parse_module(src)
    ctx = FileContext(path, module, src, ImportTable(path[:-3].replace("/", "."), False))
    Dispatcher(ctx, []).run()
    return ctx, ctx.semantic


def find(module: cst.CSTNode, kind: type, pred=lambda n: True):
    from torchlint.tree import iter_nodes

    return [n for n in iter_nodes(module) if isinstance(n, kind) and pred(n)]


def fn(ctx, name):
    return find(ctx.module, cst.FunctionDef, lambda n: n.name.value == name)[0]


def call(ctx, callee):
    from torchlint.statements import dotted_name

    return [c for c in find(ctx.module, cst.Call) if dotted_name(c.func) == callee]


def test_local_shadowing_an_import_is_not_the_import():
    ctx, sem = analyses("import torch\ndef f(torch):\n    return torch.zeros(1)\ndef g():\n    return torch.ones(1)\n")
    zeros, ones = call(ctx, "torch.zeros")[0], call(ctx, "torch.ones")[0]
    assert ctx.qualified_name(zeros.func) == "torch.zeros"  # the old, scope-blind answer
    assert not sem.model.is_imported(zeros.func)
    assert sem.model.qualified_name(ones.func) == "torch.ones" and sem.model.is_imported(ones.func)


def test_function_level_import_binds_only_there():
    ctx, sem = analyses("def f():\n    import numpy as np\n    np.zeros(1)\ndef g():\n    np.ones(1)\n")
    assert sem.model.is_imported(call(ctx, "np.zeros")[0].func)
    assert not sem.model.is_imported(call(ctx, "np.ones")[0].func)


def test_reaching_definitions_straight_line_and_branches():
    ctx, sem = analyses("x = 1\nx = 2\nprint(x)\nif c:\n    x = 3\nprint(x)\nfor i in y:\n    print(x)\n    x = 4\n")
    prints = call(ctx, "print")
    values = lambda node: [b.value.value for b in sem.model.reaching("x", node.args[0].value)]
    assert values(prints[0]) == ["2"]  # straight line: only the last assignment
    assert values(prints[1]) == ["2", "3"]  # the conditional one may or may not have run
    assert values(prints[2]) == ["2", "3", "4"]  # loop-carried


def test_self_name_and_class_attributes():
    ctx, sem = analyses(
        "import torch.nn as nn\nclass Net(nn.Module):\n    def __init__(me):\n        me.fc = nn.Linear(1, 1)\n"
        "        me.unused = nn.ReLU()\n    def forward(me, x):\n        f = lambda: me.fc(x)\n        return f()\n"
        "    @staticmethod\n    def s(x):\n        return x\n")
    model = sem.model
    assert model.self_name(fn(ctx, "forward")) == "me"
    assert model.self_name(fn(ctx, "s")) is None
    info = next(iter(model.classes.values()))
    assert info.bases == ["torch.nn.Module"]
    assert set(info.methods) == {"__init__", "forward", "s"}
    assert set(info.self_assigned) == {"fc", "unused"} and info.self_read == {"fc"}


def test_call_graph_through_self_partial_lambda_closure_and_constructors():
    ctx, sem = analyses(
        "import functools\n"
        "def leaf():\n    pass\n"
        "def via_partial():\n    pass\n"
        "class Base:\n    def helper(self):\n        leaf()\n"
        "class T(Base):\n    def __init__(self):\n        pass\n"
        "    def run(self):\n        p = functools.partial(via_partial, 1)\n        p()\n"
        "        g = lambda: self.helper()\n        g()\n"
        "        def inner():\n            return leaf()\n        return inner\n"
        "def main():\n    T().run()\n")
    graph = sem.graph
    reach = graph.reach([fn(ctx, "run")])
    names = {n.name.value for n in reach if isinstance(n, cst.FunctionDef)}
    assert {"run", "via_partial", "helper", "leaf"} <= names
    assert "inner" not in names  # defined, never called
    assert {n.name.value for n in graph.callees(fn(ctx, "main")) if isinstance(n, cst.FunctionDef)} == {"__init__"}
    assert "run" in {n.name.value for n in sem.loose_graph.callees(fn(ctx, "main")) if isinstance(n, cst.FunctionDef)}


def test_comprehension_and_lambda_calls_are_call_sites():
    ctx, sem = analyses("def f(x):\n    return x\nys = [f(x) for x in range(3)]\nh = lambda: f(1)\n")
    sites = sem.model.calls_to("f")
    assert [s.scope.kind for s in sites] == ["comprehension", "lambda"]
    assert fn(ctx, "f") in sem.graph.callees(ctx.module)  # the comprehension runs with the module


def test_calls_to_reads_names_and_attributes():
    ctx, sem = analyses("def run(x):\n    pass\nrun(1)\nself.run(2)\nother.run(3)\nrunner(4)\n")
    assert [ctx.module.code_for_node(s.node) for s in sem.model.calls_to("run")] == ["run(1)", "self.run(2)", "other.run(3)"]
    assert sem.model.calls_to("run") is not sem.model.calls_to("run")  # a copy: callers may change it


def test_code_scope_and_loops_around_see_through_comprehensions():
    ctx, sem = analyses(
        "def f(opts, loader):\n"
        "    for x in loader:\n"
        "        while x:\n"
        "            [o.zero_grad() for o in opts]\n"
        "            p.grad = None\n"
        "        def g():\n"
        "            for y in x:\n"
        "                q.grad = None\n"
        "class C:\n"
        "    for z in range(2):\n"
        "        w = z\n")
    model = sem.model
    (site,) = model.calls_to("zero_grad")
    assert site.scope.kind == "comprehension" and site.loops == ()
    assert model.code_scope(site.scope).node is fn(ctx, "f")
    assert [lp.node for lp in model.loops_around(site.node)] == [lp.node for lp in site.all_loops]
    grads = find(ctx.module, cst.Attribute, lambda n: n.attr.value == "grad")
    outer = [type(lp.node).__name__ for lp in model.loops_around(grads[0])]
    assert outer == ["For", "While"]
    inner = model.loops_around(grads[1])  # g's own loop only, not f's
    assert len(inner) == 1 and inner[0].scope.node is fn(ctx, "g")
    (w,) = find(ctx.module, cst.Name, lambda n: n.value == "w")
    assert [lp.scope.kind for lp in model.loops_around(w)] == ["class"]
    assert model.code_scope(model.scope_of(w)).kind == "class"


def test_loop_classification_and_training_closure():
    ctx, sem = analyses(
        "import torch\n"
        "def step(model, batch, opt):\n    loss = model(batch)\n    loss.backward()\n    opt.step()\n"
        "def train(model, loader, opt):\n    for epoch in range(10):\n        for batch in loader:\n"
        "            step(model, batch, opt)\n"
        "def evaluate(model, val_loader):\n    model.eval()\n    with torch.no_grad():\n"
        "        for batch in val_loader:\n            model(batch)\n")
    training = sem.training
    loops = {lp.node.iter.value if isinstance(lp.node.iter, cst.Name) else "range": lp for lp in sem.model.loops.values()}
    assert {DATA, TRAINING} <= training.loop_kinds(loops["loader"])
    assert EPOCH in training.loop_kinds(loops["range"])
    evaluation = loops["val_loader"]
    assert EVALUATION in training.loop_kinds(evaluation)
    assert training.trains(fn(ctx, "step")) and training.trains(fn(ctx, "train"))
    assert training.once_per_batch(fn(ctx, "step"))
    assert not training.trains(fn(ctx, "evaluate")) and training.evaluates(fn(ctx, "evaluate"))


def test_bindings_frozen_and_no_grad_regions():
    ctx, sem = analyses(
        "import torch\nopt = torch.optim.SGD(p, lr=0.1)\nsched = torch.optim.lr_scheduler.StepLR(opt, 1)\n"
        "scaler = torch.cuda.amp.GradScaler()\ncrit = torch.nn.CrossEntropyLoss()\n"
        "teacher.requires_grad_(False)\nfor q in backbone.parameters():\n    q.requires_grad = False\n"
        "with torch.no_grad():\n    a = f(1)\nb = f(2)\n")
    training = sem.training
    assert set(training.bindings["optimizer"]) == {"opt"} and set(training.bindings["scheduler"]) == {"sched"}
    assert set(training.bindings["scaler"]) == {"scaler"} and set(training.bindings["criterion"]) == {"crit"}
    assert training.frozen() == {"teacher", "backbone"}
    first, second = call(ctx, "f")
    assert training.grad_choice_above(first) and not training.grad_choice_above(second)


def test_deeply_nested_file_needs_no_recursion():
    import sys

    src = "x = 0\n" + "".join("    " * i + "if x:\n" for i in range(90)) + "    " * 90 + "y = " + "+".join(["g(1)"] * 400) + "\n"
    ctx, _ = analyses(src)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(150)  # far below the tree's depth: any recursive walk would fail
    try:
        model = ctx.semantic.model
    finally:
        sys.setrecursionlimit(limit)
    assert len(model.calls) == 400 and model.calls[0].scope.kind == "module"


def test_project_ancestors_subclasses_is_nn_module_and_function_summary():
    files = {
        "pkg/base.py": "import torch.nn as nn\nclass Block(nn.Module):\n    pass\nclass Plain:\n    pass\n",
        "pkg/net.py": "from pkg.base import Block, Plain\nclass Net(Block):\n    pass\nclass Other(Plain):\n    pass\n",
        "pkg/loop.py": "import torch\ndef fit(model, loader, opt):\n    for b in loader:\n        model(b).backward()\n"
                       "        opt.step()\ndef set_seed(s):\n    torch.manual_seed(s)\n",
    }
    records = [analyze_source(p, t.encode(), frozenset({"TL006"})).record for p, t in files.items()]
    project = Project(records)
    assert project.ancestors("pkg.net.Net") == ["pkg.base.Block", "torch.nn.Module"]
    assert project.subclasses("pkg.base.Block") == ["pkg.net.Net"]
    assert project.is_nn_module("pkg.net.Net") and not project.is_nn_module("pkg.net.Other")
    loop = project.record("pkg/loop.py")
    assert project.function_summary("pkg.loop.fit", loop)["trains"]
    assert project.function_summary("pkg.loop.set_seed", loop)["seeds"]


def test_project_subclasses_agree_with_ancestors_through_chains_external_bases_and_cycles():
    files = {
        "pkg/a.py": "import torch.nn as nn\nclass A(nn.Module):\n    pass\nclass Loop1(Loop2):\n    pass\n"
                    "class Loop2(Loop1):\n    pass\n",
        "pkg/b.py": "from pkg.a import A\nclass B(A):\n    pass\nclass C(B, dict):\n    pass\n",
        "pkg/c.py": "from pkg.b import C\nclass D(C):\n    pass\nclass E:\n    pass\n",
    }
    records = [analyze_source(p, t.encode(), frozenset({"TL006"})).record for p, t in files.items()]
    project = Project(records)
    assert project.subclasses("pkg.a.A") == ["pkg.b.B", "pkg.b.C", "pkg.c.D"]
    assert project.subclasses("torch.nn.Module") == ["pkg.a.A", "pkg.b.B", "pkg.b.C", "pkg.c.D"]
    assert project.subclasses("dict") == ["pkg.b.C", "pkg.c.D"]
    assert project.subclasses("pkg.a.Loop1") == ["pkg.a.Loop2"]  # a cycle never makes a class its own subclass
    assert project.subclasses("pkg.c.E") == [] and project.subclasses("nowhere.X") == []
    every = ["pkg.a.A", "pkg.a.Loop1", "pkg.a.Loop2", "pkg.b.B", "pkg.b.C", "pkg.c.D", "pkg.c.E", "torch.nn.Module",
             "dict"]
    for name in every:  # the inverse table answers what a scan of every class's ancestors would
        assert project.subclasses(name) == sorted(c for c in every[:7] if name in project.ancestors(c))


def test_grad_mode_exprs_lists_with_items_aliases_and_decorators():
    from torchlint.semantic.training import grad_mode_exprs_of

    ctx, sem = analyses(
        "import torch, contextlib\n"
        "@torch.no_grad()\n"
        "def f(model, x, frozen):\n"
        "    ctx = torch.no_grad if frozen else contextlib.nullcontext\n"
        "    with ctx(), torch.autocast('cuda'):\n"
        "        return model(x)\n"
    )
    around = ctx.ancestors(call(ctx, "model")[0])  # innermost first
    texts = [ctx.module.code_for_node(e) for anc in around for e in grad_mode_exprs_of(sem.model, anc)]
    assert texts == ["ctx()", "torch.no_grad if frozen else contextlib.nullcontext", "torch.autocast('cuda')",
                     "torch.no_grad()"]


def test_in_lightning_eval_hook_any_enclosing_function():
    from torchlint.semantic.training import in_lightning_eval_hook

    ctx, sem = analyses(
        "class L:\n"
        "    def validation_step(self, b):\n"
        "        def inner():\n"
        "            return self.model(b)\n"
        "        return inner()\n"
        "    def training_step(self, b):\n"
        "        return self.net(b)\n"
    )
    assert in_lightning_eval_hook(ctx, call(ctx, "self.model")[0])
    assert not in_lightning_eval_hook(ctx, call(ctx, "self.net")[0])
    assert sem.training.grad_choice_above(call(ctx, "self.model")[0], lightning_hooks=True)
    assert not sem.training.grad_choice_above(call(ctx, "self.model")[0])


def test_freeze_sites_with_loop_parameters_standing_for_their_module():
    from torchlint.semantic.training import freeze_sites

    ctx, sem = analyses(
        "def f(model, enc, head, p):\n"
        "    for name, q in model.named_parameters():\n"
        "        if 'bn' in name:\n"
        "            q.requires_grad = False\n"
        "    enc.requires_grad_(False)\n"
        "    utils.freeze_params(head)\n"
        "    set_requires_grad(self.disc, False)\n"
        "    set_requires_grad(self.gen, True)\n"
        "    unfreeze(self.gen)\n"
        "    p.requires_grad_(False)\n"
        "    self.backbone.freeze()\n"
    )
    assert [k for k, _ in freeze_sites(sem.model)] == ["enc", "head", "self.disc", "p", "self.backbone", "model"]
    key, node = freeze_sites(sem.model)[-1]
    assert isinstance(node, cst.Assign)


def test_empty_unpacking_targets_bind_nothing():
    """``with x as ():`` and ``() = x`` are valid Python with no target (found by the
    hypothesmith property test: the model indexed an empty list)."""
    from torchlint.testing import lint_snippet

    code = "import torch\nwith open('f') as ():\n    pass\n() = []\nfor () in [()]:\n    model.eval()\n    model(x)\n"
    assert [f.rule for f in lint_snippet(code)] == ["TL003"]


def test_self_sites_carry_their_scope():
    ctx, sem = analyses(
        "class Net:\n    def __init__(self):\n        self.fc = 1\n    def forward(self, x):\n"
        "        return [self.fc for _ in x]\n")
    (info,) = sem.model.classes.values()
    sites = [(node.attr.value, scope.kind, scope.function().name) for node, scope in info.self_sites]
    assert sites == [("fc", "function", "__init__"), ("fc", "comprehension", "forward")]


def test_class_facts_name_classes_inside_functions_and_their_local_bases():
    import ast

    from torchlint.semantic.index import class_facts, index_name

    src = ("import torch.nn as nn\nclass Outer:\n    class A(nn.Module):\n        pass\n    class B(A):\n        pass\n"
           "def make():\n    if True:\n        class Local(nn.Module):\n            pass\n"
           "    class Sub(Local):\n        def build(self):\n            class Deep(Sub):\n                pass\n")
    imports = ImportTable("pkg.m", False)
    imports.scan(ast.parse(src))
    facts = {f["name"]: f["bases"] for f in class_facts(ast.parse(src), imports)}
    assert facts == {"Outer": [], "Outer.A": ["torch.nn.Module"], "Outer.B": ["pkg.m.Outer.A"],
                     "make.Local": ["torch.nn.Module"], "make.Sub": ["pkg.m.make.Local"],
                     "make.Sub.build.Deep": ["pkg.m.make.Sub"]}
    ctx, sem = analyses(src, "pkg/m.py")
    assert sorted(index_name(info.scope) for info in sem.model.classes.values()) == sorted(facts)


def test_project_resolves_classes_through_reexports_and_star_imports_and_loose_subclasses():
    files = {
        "pkg/__init__.py": "from .blocks import Block\n",
        "pkg/blocks.py": "import torch.nn as nn\nclass Block(nn.Module):\n    pass\nclass Weight(nn.Parameter):\n    pass\n",
        "pkg/star.py": "from pkg.blocks import *\nclass Net(Block):\n    pass\n",
        "pkg/lost.py": "from elsewhere.blocks import Block as B\nimport typing\nclass Odd(B, typing.Generic):\n    pass\n",
        "pkg/typing.py": "X = 1\n",
    }
    records = [analyze_source(p, t.encode(), frozenset({"TL005"})).record for p, t in files.items()]
    project = Project(records)
    star = project.record("pkg/star.py")
    assert project.resolve_class("pkg.Block", star) == "pkg.blocks.Block"
    assert project.resolve_class("Block", star) == "pkg.blocks.Block"  # star-imported
    assert project.resolve_class("pkg.blocks.Nothing", star) is None
    assert project.ancestors("pkg.star.Net") == ["pkg.blocks.Block", "torch.nn.Module"]
    # ``typing.Generic`` is not resolved into pkg/typing.py, which defines no such class.
    assert project.ancestors("pkg.lost.Odd") == ["elsewhere.blocks.Block", "typing.Generic"]
    assert project.is_project_class("pkg.blocks.Block") and not project.is_project_class("typing.Generic")
    assert project.direct_subclasses("pkg.blocks.Block") == ["pkg.star.Net"]
    assert project.direct_subclasses("pkg.blocks.Block", loose=True) == ["pkg.lost.Odd", "pkg.star.Net"]
    assert project.is_nn_module("pkg.star.Net") and not project.is_nn_module("pkg.blocks.Weight")


def test_torch_nn_class():
    from torchlint.libraries import torch_nn_class

    assert torch_nn_class("torch.nn.modules.conv.Conv2d") == "Conv2d"
    assert torch_nn_class("torch.nn.Parameter") is None and torch_nn_class("torch.nn.functional.relu") is None


def test_class_facts_self_attributes_come_from_the_class_own_methods():
    """``self.x`` stores in statements (unpacked, annotated, augmented, ``for``/``with``
    targets, nested functions) count; a class nested in a method has a ``self`` of its own."""
    import ast

    from torchlint.imports import ImportTable
    from torchlint.semantic.index import class_facts

    code = ("class Outer:\n"
            "    def __init__(self):\n"
            "        self.a, (self.b, *self.c) = 1, (2, 3)\n"
            "        self.d: int = 4\n"
            "        self.e += 1\n"
            "        for self.f in []:\n            pass\n"
            "        with open('x') as self.g:\n            pass\n"
            "        def later():\n            self.h = 5\n"
            "        other.i = 6\n"
            "        class Inner:\n"
            "            def __init__(self):\n                self.j = 7\n")
    facts = {c["name"]: c for c in class_facts(ast.parse(code), ImportTable("m", False))}
    assert facts["Outer"]["self_attrs"] == ["a", "b", "c", "d", "e", "f", "g", "h"]
    assert facts["Outer.__init__.Inner"]["self_attrs"] == ["j"]


def test_reaching_definitions_a_binding_at_the_top_of_the_loop_body_stops_loop_carried_ones():
    ctx, sem = analyses(
        "for b in y:\n    x = f(b)\n    if c:\n        g(x)\n        x = h(x)\n    print(x)\n"
        "for b in y:\n    if d:\n        x = f(b)\n    print(x)\n    x = k(x)\n")
    prints = call(ctx, "print")
    g_call = call(ctx, "g")[0]
    values = lambda node: [b.value.func.value for b in sem.model.reaching("x", node)]
    # every iteration binds x = f(b) first: h(x) of the previous iteration never reaches g(x)
    assert values(g_call.args[0].value) == ["f"]
    assert values(prints[0].args[0].value) == ["f", "h"]
    # a conditional binding at the top does not stop what the previous iteration left
    assert values(prints[1].args[0].value) == ["f", "h", "f", "k"]


def test_reaching_definitions_a_read_in_a_bindings_own_value_sees_what_came_before():
    ctx, sem = analyses("m = Net()\nm = m.to(d)\nprint(m)\nfor b in y:\n    m = m.cuda()\n")
    reads = [c.func.value for c in call(ctx, "m.to") + call(ctx, "m.cuda")]
    values = lambda node: [sem.model.ctx.module.code_for_node(b.value) for b in sem.model.reaching("m", node)]
    assert values(reads[0]) == ["Net()"]  # not the binding it is read in
    assert values(call(ctx, "print")[0].args[0].value) == ["m.to(d)"]
    assert values(reads[1]) == ["m.to(d)", "m.cuda()"]  # in a loop: the previous iteration's too


def test_call_graph_closure_follows_callers_through_chains_callbacks_and_recursion():
    ctx, sem = analyses(
        "def h():\n    pass\n"
        "def g():\n    h()\n"
        "def f():\n    g()\n"
        "def k(run):\n    run(g)\n"
        "def a(n):\n    return b(n)\n"
        "def b(n):\n    return a(n - 1) if n else h()\n"
        "def u():\n    print(1)\n"
        "lam = lambda: f()\n"
    )
    graph = sem.graph
    defs = {n.name.value: n for n in find(ctx.module, cst.FunctionDef)}
    lam = find(ctx.module, cst.Lambda)[0]
    marked = graph.closure({defs["h"]})
    assert marked == {defs[n] for n in ("h", "g", "f", "k", "a", "b")} | {lam}
    assert graph.closure({defs["u"]}) == {defs["u"]}
    assert graph.closure(set()) == set()


def test_call_graph_a_class_or_function_only_inspected_by_a_builtin_is_not_handed_on():
    ctx, sem = analyses(
        "class Decoder:\n    def __init__(self):\n        pass\n"
        "def hook():\n    pass\n"
        "def check(m, run):\n"
        "    assert isinstance(m, Decoder) and callable(hook)\n"
        "    print(hook)\n"
        "    run(hook)\n"
        "def shadowed(isinstance):\n"
        "    isinstance(Decoder)\n"
    )
    graph = sem.graph
    defs = {n.name.value: n for n in find(ctx.module, cst.FunctionDef)}
    # ``run(hook)`` hands ``hook`` on; the builtins only look at ``Decoder`` and ``hook``.
    assert graph.reach([defs["check"]]) == {defs["check"], defs["hook"]}
    # A parameter named ``isinstance`` is not the builtin: ``Decoder`` may be constructed.
    assert defs["__init__"] in graph.reach([defs["shadowed"]])


def test_reaching_definitions_a_read_in_an_unpacking_value_sees_what_came_before():
    ctx, sem = analyses("for x in loader:\n    s, n = decoder(x)\n    s, _ = pack(s, n)\n    loss(s)\n")
    read = call(ctx, "pack")[0].args[0].value
    assert [ctx.line_of(b.node) for b in sem.model.reaching("s", read)] == [2]  # not its own, from the last iteration
    assert [ctx.line_of(b.node) for b in sem.model.reaching("s", call(ctx, "loss")[0].args[0].value)] == [3]


_SCOPES_AND_ALIASES = (
    "import functools\n"
    "class Base:\n    def helper(self):\n        pass\n"
    "class Net(Base):\n"
    "    def __init__(self, act=lambda x: x):\n        self.layers = [self.helper() for _ in range(2)]\n"
    "    @staticmethod\n    def make(n=[i for i in range(3)]):\n        return Net()\n"
    "    def forward(self, x):\n        f = self.helper\n        g = functools.partial(self.other, 1)\n"
    "        h = x.missing\n        f(); g(); h(); x.helper(); self.helper(); super().helper()\n"
    "        run = lambda: {k: x.helper() for k in x}\n        return run(), [y.forward() for y in x]\n"
    "def outer():\n    def inner(cb=lambda: Net().forward(1)):\n        class Local(Net):\n            def go(self):\n"
    "                return self.make()\n        return Local\n    obj = Net()\n    obj.forward(2)\n"
    "    return inner(outer)\n"
)


def test_scope_of_answers_as_the_walk_up_the_parents_for_every_node():
    # ``scope_of`` reads the scopes' ranges of walk numbers: the same innermost scope node
    # as the first ancestor that opens a scope (defaults, decorators and bases are inside
    # the def's or class's node, as that walk finds them).
    ctx, sem = analyses(_SCOPES_AND_ALIASES)
    model = sem.model
    assert model._spans is not None
    for node in model.order:
        current = node
        while current is not None and current not in model.scopes:
            current = ctx.parent(current)
        expected = model.scopes[current] if current is not None else model.module
        assert model.scope_of(node) is expected


def test_the_loose_graph_shares_the_exact_graphs_answers_as_if_it_resolved_alone():
    from torchlint.semantic.callgraph import CallGraph

    for exact_first in (False, True):
        ctx, sem = analyses(_SCOPES_AND_ALIASES)
        model = sem.model
        alone = CallGraph(model, loose=True)
        if exact_first:
            for site in model.calls:
                sem.graph.targets(site), sem.graph.references(site)
        for site in model.calls:
            assert sem.loose_graph.targets(site) == alone.targets(site)
            assert sem.loose_graph.references(site) == alone.references(site)
        for scope in model.scopes.values():
            assert sem.loose_graph.callees(scope.node) == alone.callees(scope.node)
    # by-name edges were added (``x.helper()``), and through an alias (``h = x.missing``) too
    assert any(alone.targets(s) != sem.graph.targets(s) for s in model.calls)
    assert sem.graph._open and any(v is not None and not isinstance(v, str) for v in sem.graph._open.values())
