"""The import contract: torchlint's modules form layers, each importing only its own layer and
the layers below, with no import cycle anywhere. Every import counts: at module level, inside
functions (where most of the lazy imports are), and the package ``__init__`` an import of a
submodule runs; only ``if TYPE_CHECKING:`` blocks are left out (annotations, never executed).

    entry points   cli, __main__, server, lsp_frames, flake8, testing
    trace          trace.*
    run            run, pool, cache, baseline, output, formats.*, pins, catalog
    engine         engine, context
    rules          checks.*
    semantic       semantic.*, torch_api
    core           everything else (files, config, source, rule, registry, codes, tree, ...)
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "torchlint"

LAYERS = [
    ("entry", ("torchlint.cli", "torchlint.__main__", "torchlint.server", "torchlint.lsp_session",
               "torchlint.lsp_documents", "torchlint.lsp_frames", "torchlint.flake8",
               "torchlint.testing")),
    ("trace", ("torchlint.trace",)),
    ("run", ("torchlint.run", "torchlint.pool", "torchlint.cache", "torchlint.baseline", "torchlint.output",
             "torchlint.formats", "torchlint.pins", "torchlint.catalog")),
    ("engine", ("torchlint.engine", "torchlint.context")),
    ("rules", ("torchlint.checks",)),
    ("semantic", ("torchlint.semantic", "torchlint.torch_api")),
    ("core", ("torchlint",)),
]


def _modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


MODULES = _modules()


def layer_of(module: str) -> int:
    for rank, (_, prefixes) in enumerate(LAYERS):
        if any(module == p or module.startswith(p + ".") for p in prefixes):
            return rank
    raise AssertionError(f"{module} is in no layer")


def _type_checking(node: ast.If) -> bool:
    return "TYPE_CHECKING" in ast.unparse(node.test)


def _imports(name: str) -> set[str]:
    """The torchlint modules ``name`` imports, anywhere in it but ``if TYPE_CHECKING:``."""
    path = MODULES[name]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = {id(n) for block in ast.walk(tree) if isinstance(block, ast.If) and _type_checking(block)
               for n in ast.walk(block)}
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(tree):
        if id(node) in skipped or not isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        else:
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parts = parts[:len(parts) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names]
        for target in targets:
            while target and target not in MODULES:
                target = target.rpartition(".")[0]
            if target:  # and every package whose __init__ importing it runs, beyond its own
                parts = target.split(".")
                found.update(p for p in (".".join(parts[:i]) for i in range(2, len(parts) + 1))
                             if p == target or not (name == p or name.startswith(p + ".")))
    found.discard(name)
    return {m for m in found if m in MODULES and m != "torchlint"}


GRAPH = {name: _imports(name) for name in MODULES}


def test_every_module_is_in_a_layer():
    for name in MODULES:
        layer_of(name)


def test_no_module_imports_a_layer_above_its_own():
    wrong = sorted(f"{name} ({LAYERS[layer_of(name)][0]}) imports {target} ({LAYERS[layer_of(target)][0]})"
                   for name, targets in GRAPH.items() for target in targets if layer_of(target) < layer_of(name))
    assert not wrong, "\n".join(wrong)


def test_there_is_no_import_cycle():
    """Tarjan's strongly connected components over every import."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in GRAPH[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for name in sorted(GRAPH):
        if name not in index:
            visit(name)
    detail = [f"{c}: " + "; ".join(f"{v} -> {sorted(GRAPH[v] & set(c))}" for v in c) for c in cycles]
    assert not cycles, "\n".join(detail)


def test_the_contract_sees_function_level_imports_and_packages():
    """The graph is not only module-level imports: the command line's lazy import of the run
    layer counts, and so does the package ``__init__`` an import of its submodule runs."""
    assert "torchlint.run" in GRAPH["torchlint.cli"]  # inside cmd_check
    assert "torchlint.trace" in GRAPH["torchlint.cli"]  # torchlint.trace.command, inside a function
    assert "torchlint.semantic" in GRAPH["torchlint.checks.tl001_missing_zero_grad"]
