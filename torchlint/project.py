"""The project-level pass: what one file needs to know about the others.

It works only on ``FileRecord``s, the small JSON-serialisable summaries the per-file pass
produces (never on trees), so per-file work can run in parallel and be cached.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterator

from torchlint.noqa import Suppressions

if TYPE_CHECKING:
    from torchlint.pins import TorchPin


def module_name_for(display_path: str) -> str:
    """``pkg/sub/mod.py`` -> ``pkg.sub.mod``; ``pkg/__init__.py`` -> ``pkg``; a notebook
    ``pkg/nb.ipynb`` -> ``pkg.nb-ipynb``, a name no import can spell (nothing imports a
    notebook, and ``pkg/nb.py`` beside it keeps ``pkg.nb``)."""
    path = display_path.lstrip("/")
    if path.endswith(".ipynb"):
        path = path[: -len(".ipynb")] + "-ipynb"
    for suffix in (".pyi", ".py"):
        if path.endswith(suffix):
            path = path[: -len(suffix)]
            break
    parts = [p for p in path.split("/") if p not in ("", ".", "..")]
    if parts and parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


class Facts(Mapping):
    """Each rule's facts about one file (rule code -> JSON value), kept JSON-encoded.

    The project pass needs every file's record at once; as Python objects the facts cost a
    few kilobytes per file, encoded a few hundred bytes, so memory stays nearly flat in the
    number of files. Every access decodes afresh (a copy: mutating it changes nothing).
    """

    __slots__ = ("_encoded",)

    def __init__(self, values: Mapping[str, Any] | None = None):
        self._encoded = {code: encode(value) for code, value in (values or {}).items()}

    @classmethod
    def from_encoded(cls, encoded: dict[str, bytes]) -> "Facts":
        facts = cls()
        facts._encoded = encoded
        return facts

    def encoded_text(self) -> dict[str, str]:
        """rule code -> the facts' JSON text, as the cache stores them (no decoding)."""
        return {code: blob.decode("utf-8") for code, blob in self._encoded.items()}

    def __getitem__(self, code: str) -> Any:
        return json.loads(self._encoded[code])

    def __iter__(self) -> Iterator[str]:
        return iter(self._encoded)

    def __len__(self) -> int:
        return len(self._encoded)

    def __repr__(self) -> str:
        return f"Facts({dict(self)!r})"

    def __getstate__(self):
        return self._encoded

    def __setstate__(self, state) -> None:
        self._encoded = state


def encode(value: Any) -> bytes:
    """Compact JSON; a TypeError for what JSON cannot hold (a rule bug)."""
    return json.dumps(value, separators=(",", ":"), allow_nan=False).encode("utf-8")


@dataclass(slots=True)
class FileRecord:
    path: str
    module_name: str
    is_package: bool = False
    # local name -> qualified name (relative imports already made absolute)
    imports: dict[str, str] = field(default_factory=dict)
    star_imports: list[str] = field(default_factory=list)
    # torchlint.semantic.index.FileIndex as JSON: classes (bases, methods, self attributes)
    # and, where the training model was built, top-level function summaries
    index: dict = field(default_factory=dict)
    # rule code -> that rule's facts about this file
    facts: Facts = field(default_factory=Facts)
    suppressions: Suppressions = field(default_factory=Suppressions)
    # why the file could not be analysed (its TL000 message; "" where it was)
    unanalysed: str = ""
    # a notebook's code cells: [cell number, first line in the joined text] (torchlint.notebook.Cells)
    cells: list = field(default_factory=list)
    # a notebook's cells that could not be checked, and why ("cell 2 (syntax error: ..., line 1,
    # column 12)"; "" where every cell was): the run warns of them where TL000 is not enabled
    skipped_cells: str = ""
    # rule code -> the ``demanded_facts`` of a rule that ``gathers_demanded``, gathered on the
    # ordinary pass where the rule did not run (``Project.demand`` reads them first)
    demanded: Facts = field(default_factory=Facts)

    @property
    def parsed(self) -> bool:
        return not self.unanalysed

    def qualified(self, name: str) -> str:
        """A name inside this file (``Net``, ``Outer.Inner``, ``train``) as the project knows it:
        ``pkg.mod.Net``."""
        return f"{self.module_name}.{name}" if self.module_name else name

    def project_digest(self) -> str:
        """What the project pass reads of this record (all of it but the noqa comments and a
        notebook's cells), hashed: a project pass over records of the same digests, with the
        same settings and the same facts demanded of the same files, finds the same. So an edit
        that changes none of it (a comment or a noqa that moves no line) does not make it run again."""
        blob = json.dumps([self.path, self.module_name, self.is_package, self.imports, self.star_imports,
                           self.index, self.facts.encoded_text(), self.unanalysed, self.demanded.encoded_text()],
                          sort_keys=True, separators=(",", ":"))
        return hashlib.blake2b(blob.encode("utf-8", "surrogatepass"), digest_size=20).hexdigest()

    def to_json(self) -> dict:
        return {
            "path": self.path,
            "module_name": self.module_name,
            "is_package": self.is_package,
            "imports": self.imports,
            "star_imports": self.star_imports,
            "index": self.index,
            "facts": self.facts.encoded_text(),
            "suppressions": self.suppressions.to_json(),
            "unanalysed": self.unanalysed,
            "cells": self.cells,
            "skipped_cells": self.skipped_cells,
            "demanded": self.demanded.encoded_text(),
        }

    @classmethod
    def from_json(cls, data: dict) -> "FileRecord":
        data = dict(data)
        data["suppressions"] = Suppressions.from_json(data["suppressions"])
        data["facts"] = Facts.from_encoded({code: text.encode("utf-8") for code, text in data["facts"].items()})
        data["demanded"] = Facts.from_encoded({code: text.encode("utf-8") for code, text in data.get("demanded", {}).items()})
        return cls(**data)


class Project:
    """Every linted file's record, with import resolution across them.

    Module names come from paths, so ``from models.base import Backbone`` finds
    ``src/models/base.py`` whatever directory was linted: a dotted name matches any record
    whose module name ends with it, and among several the one nearest the importer wins.
    """

    def __init__(self, records: list[FileRecord], torch_pin: "TorchPin | None" = None,
                 demand: "Callable[[str, str], Any] | None" = None):
        self.records = sorted(records, key=lambda r: r.path)
        # the torch requirement the project root declares (``torchlint.pins``), read by the run layer
        self.torch_pin = torch_pin
        # (rule code, path) -> that rule's ``demanded_facts`` of the file, from the run layer
        self._demand = demand
        self._demanded: dict[tuple[str, str], Any] = {}
        self._by_suffix: dict[str, list[FileRecord]] = {}
        for record in self.records:
            parts = record.module_name.split(".") if record.module_name else []
            for i in range(len(parts)):
                self._by_suffix.setdefault(".".join(parts[i:]), []).append(record)
        self._by_path = {r.path: r for r in self.records}
        # ``importers``: (named imports, any import) -> path -> importing records; built on first use
        self._importers_tables: tuple[dict[str, list[FileRecord]], dict[str, list[FileRecord]]] | None = None

    def record(self, path: str) -> FileRecord | None:
        return self._by_path.get(path)

    def demand(self, code: str, path: str) -> Any:
        """What rule ``code`` gives of the file ``path`` only on request (``Rule.demanded_facts``):
        as the ordinary pass gathered them (``FileRecord.demanded``, part of the record's
        ``project_digest``), else from the run layer, which analyses the file again, once per
        run. None where nobody can say (no run layer behind this project, the file cannot be
        read or analysed)."""
        key = (code, path)
        if key not in self._demanded:
            record = self._by_path.get(path)
            if record is not None and code in record.demanded:
                self._demanded[key] = record.demanded[code]
            else:
                self._demanded[key] = self._demand(code, path) if self._demand is not None else None
        return self._demanded[key]

    def resolve_module(self, dotted: str, importer: FileRecord | None = None) -> FileRecord | None:
        candidates = self._by_suffix.get(dotted)
        if not candidates:
            return None
        if len(candidates) == 1 or importer is None:
            return candidates[0]

        def closeness(rec: FileRecord) -> tuple[int, str]:
            a, b = rec.path.split("/"), importer.path.split("/")
            common = 0
            for x, y in zip(a, b):
                if x != y:
                    break
                common += 1
            return (-common, rec.path)

        return min(candidates, key=closeness)

    def resolve_symbol(
        self, qualified: str, importer: FileRecord | None = None, _depth: int = 0
    ) -> tuple[FileRecord, str] | None:
        """``pkg.models.Backbone`` -> (record of pkg/models.py, "Backbone"), trying the longest
        module prefix first. Follows one level of re-export through ``__init__`` imports."""
        parts = qualified.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            record = self.resolve_module(".".join(parts[:cut]), importer)
            if record is None:
                continue
            name = ".".join(parts[cut:])
            head = name.split(".")[0]
            if head in record.imports and record.imports[head] != qualified:
                # re-exported (``from .base import Backbone`` in ``__init__.py``)
                target = record.imports[head] + name[len(head):]
                again = self.resolve_symbol(target, record, _depth + 1) if target != qualified and _depth < 8 else None
                if again is not None:
                    return again
            return record, name
        return None

    def importers(self, record: FileRecord, *, star: bool = False) -> list[FileRecord]:
        """The other records importing ``record``'s module or one of its names (an import
        ``resolve_module`` or ``resolve_symbol`` resolves to it; with ``star``, a star import
        too), in project order. Every record's imports are resolved once, for all records
        asked about."""
        tables = self._importers_tables
        if tables is None:
            named: dict[str, list[FileRecord]] = {}
            any_import: dict[str, list[FileRecord]] = {}
            for other in self.records:
                for imported in other.imports.values():
                    for target in self._import_targets(imported, other):
                        for table in (named, any_import):
                            found = table.setdefault(target.path, [])
                            if not found or found[-1] is not other:
                                found.append(other)
                for imported in other.star_imports:
                    for target in self._import_targets(imported, other):
                        found = any_import.setdefault(target.path, [])
                        if not found or found[-1] is not other:
                            found.append(other)
            tables = self._importers_tables = (named, any_import)
        return tables[star].get(record.path, [])

    def _import_targets(self, imported: str, importer: FileRecord) -> Iterator[FileRecord]:
        """The other records the name ``importer`` imports is the module of or a name in."""
        module = self.resolve_module(imported, importer)
        if module is not None and module is not importer:
            yield module
        hit = self.resolve_symbol(imported, importer)
        if hit is not None and hit[0] is not importer:
            yield hit[0]

    # -- the project index (torchlint.semantic.index) ---------------------------------
    def _classes(self) -> dict[str, list[str]]:
        """Qualified class name (``pkg.mod.Outer.Inner``) -> its qualified bases."""
        found = getattr(self, "_class_table", None)
        if found is None:
            found = {}
            for record in self.records:
                for fact in record.index.get("classes", ()):
                    qual = record.qualified(fact["name"])
                    found[qual] = [self._canonical(b, record) for b in fact["bases"]]
            self._class_table = found
        return found

    def _class_names(self, record: FileRecord) -> set[str]:
        cache = self.__dict__.setdefault("_class_names_cache", {})
        found = cache.get(record.path)
        if found is None:
            found = cache[record.path] = {fact["name"] for fact in record.index.get("classes", ())}
        return found

    def _canonical(self, qualified: str, importer: FileRecord | None) -> str:
        """A project class's name as the index keys it (re-exports followed; a bare name
        looked up in the importer's star imports too), else ``qualified`` as given."""
        candidates = [qualified]
        if "." not in qualified and importer is not None:
            candidates += [f"{module}.{qualified}" for module in importer.star_imports]
        for name in candidates:
            hit = self.resolve_symbol(name, importer)
            if hit is not None and hit[1] in self._class_names(hit[0]):
                record, found = hit
                return record.qualified(found)
        return qualified

    def is_project_class(self, qualified: str) -> bool:
        """Whether ``qualified`` is a linted class as the index keys it (``ancestors`` lists
        project classes and external bases side by side: this tells them apart)."""
        return qualified in self._classes()

    def resolve_class(self, qualified: str, importer: FileRecord | None = None) -> str | None:
        """The project class a name used in ``importer`` stands for (``pkg.blocks.ResBlock``
        imported, re-exported or star-imported), as the index keys it; None if it is none."""
        canonical = self._canonical(qualified, importer)
        return canonical if canonical in self._classes() else None

    def direct_subclasses(self, qualified: str, *, loose: bool = False) -> list[str]:
        """Project classes that name ``qualified`` among their own bases. ``loose`` adds
        those with a base that is no project class but carries the same last name (an import
        that could not be followed may be that class); torch and standard-library bases never
        match loosely."""
        exact, by_name = self._subclass_maps()
        out = set(exact.get(qualified, ()))
        if loose:
            out |= by_name.get(qualified.rsplit(".", 1)[-1], set())
        out.discard(qualified)
        return sorted(out)

    def _subclass_maps(self) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
        found = getattr(self, "_subclass_table", None)
        if found is None:
            from torchlint.libraries import UTILITY_ROOTS, root

            table = self._classes()
            exact: dict[str, set[str]] = {}
            by_name: dict[str, set[str]] = {}
            for name, bases in table.items():
                for base in bases:
                    if base in table:
                        exact.setdefault(base, set()).add(name)
                    elif root(base) != "torch" and root(base) not in UTILITY_ROOTS:
                        by_name.setdefault(base.rsplit(".", 1)[-1], set()).add(name)
            found = self._subclass_table = (exact, by_name)
        return found

    def has_class(self, qualified: str) -> bool:
        """Whether ``qualified`` names a class of the project."""
        return qualified in self._classes()

    def ancestors(self, qualified: str) -> list[str]:
        """Every class above ``qualified`` (project classes and the external bases they
        name), nearest first, each once."""
        table = self._classes()
        out, seen, stack = [], {qualified}, list(reversed(table.get(qualified, ())))
        while stack:
            base = stack.pop()
            if base in seen:
                continue
            seen.add(base)
            out.append(base)
            stack.extend(reversed(table.get(base, ())))
        return out

    def class_fact(self, qualified: str) -> tuple[FileRecord, dict] | None:
        """A project class's index entry (``ClassFact``) and its file's record, by the
        canonical name ``ancestors`` gives (``pkg.mod.Outer.Inner``); None for a class the
        project does not define."""
        found = getattr(self, "_class_facts", None)
        if found is None:
            found = {}
            for record in self.records:
                for fact in record.index.get("classes", ()):
                    found[record.qualified(fact["name"])] = (record, fact)
            self._class_facts = found
        return found.get(qualified)

    def subclasses(self, qualified: str) -> list[str]:
        """Project classes that have ``qualified`` among their ancestors (a project class or
        an external base they name), found down one inverse table of every class's bases."""
        memo = self.__dict__.setdefault("_subclasses_memo", {})
        found = memo.get(qualified)
        if found is None:
            below = self._named_by()
            seen: set[str] = set()
            stack = list(below.get(qualified, ()))
            while stack:
                name = stack.pop()
                if name not in seen:
                    seen.add(name)
                    stack.extend(below.get(name, ()))
            seen.discard(qualified)
            found = memo[qualified] = sorted(seen)
        return list(found)

    def _named_by(self) -> dict[str, list[str]]:
        """Any class name (project or external) -> the project classes naming it as a base."""
        found = getattr(self, "_named_by_table", None)
        if found is None:
            found = {}
            for name, bases in self._classes().items():
                for base in bases:
                    found.setdefault(base, []).append(name)
            self._named_by_table = found
        return found

    def is_nn_module(self, qualified: str) -> bool:
        """Whether a project class is a ``torch.nn.Module`` (through any chain of project
        bases ending in ``torch.nn.*``/Lightning module classes)."""
        from torchlint.libraries import is_module_base

        return any(is_module_base(base) for base in [qualified, *self.ancestors(qualified)])

    def function_summary(self, qualified: str, importer: FileRecord | None = None) -> dict | None:
        """What an imported project function does (``trains``, ``evaluates``, ``seeds``,
        ``builds_optimizer``, ``returns_eval_model``), or None when the project does not know."""
        hit = self.resolve_symbol(qualified, importer)
        if hit is None:
            return None
        record, name = hit
        return record.index.get("functions", {}).get(name)
