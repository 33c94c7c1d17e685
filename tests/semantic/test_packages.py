"""``semantic.packages``: which linted files import a file (``imported_by_another``), the fact
that makes a script's function a library's (TL004, TL007, TL008)."""

from __future__ import annotations

from torchlint.project import FileRecord, Project
from torchlint.semantic.packages import imported_by_another


def _project(*records: FileRecord) -> Project:
    return Project(list(records))


def test_a_script_no_file_imports():
    script = FileRecord("examples/updatable.py", "examples.updatable", imports={"torch": "torch"})
    other = FileRecord("examples/online.py", "examples.online", imports={"nn": "torch.nn"})
    assert not imported_by_another(_project(script, other), script)


def test_a_name_imported_from_the_script_or_the_module_itself():
    script = FileRecord("examples/updatable.py", "examples.updatable")
    by_name = FileRecord("examples/online.py", "examples.online",
                         imports={"train_experience": "examples.updatable.train_experience"})
    assert imported_by_another(_project(script, by_name), script)
    by_module = FileRecord("examples/run.py", "examples.run", imports={"updatable": "examples.updatable"})
    assert imported_by_another(_project(script, by_module), script)
    star = FileRecord("examples/all.py", "examples.all", star_imports=["examples.updatable"])
    assert imported_by_another(_project(script, star), script)


def test_a_package_init_importing_its_module():
    """lightning-bolts' ``retinanet/__init__.py`` imports ``RetinaNet`` from
    ``retinanet_module.py``, a module with a ``__main__`` guard of its own."""
    module = FileRecord("src/pl_bolts/models/retinanet/retinanet_module.py", "pl_bolts.models.retinanet.retinanet_module")
    init = FileRecord("src/pl_bolts/models/retinanet/__init__.py", "pl_bolts.models.retinanet", is_package=True,
                      imports={"RetinaNet": "pl_bolts.models.retinanet.retinanet_module.RetinaNet"})
    assert imported_by_another(_project(module, init), module)


def test_a_module_of_the_same_name_in_another_tree_is_not_imported():
    """``from updatable import f`` in another package finds its own tree's module, not this one."""
    script = FileRecord("a/examples/updatable.py", "updatable")
    own = FileRecord("b/updatable.py", "updatable")
    user = FileRecord("b/run.py", "run", imports={"f": "updatable.f"})
    assert not imported_by_another(_project(script, own, user), script)
    assert imported_by_another(_project(script, own, user), own)
