"""A content-addressed cache of per-file results in ``.torchlint_cache/``.

An entry holds one file's findings and its record (facts for the project pass), keyed by a
hash of the file's bytes, its path, the torchlint version, the Python and LibCST versions
and every setting that changes per-file results. An unchanged file is never parsed again;
the project pass still sees every file's record.

A cache directory may come from anywhere (committed to a repository, unpacked from an
archive), so nothing in it is trusted:

* every entry is signed with a secret key kept outside the repository (see ``key_file``),
  created once per user; an entry this machine did not write is a miss, however it got there;
* a signed entry is still checked field by field (types, known rule codes, findings for the
  entry's own path only) before it is used;
* no path is followed out of the cache directory: a symbolic link for the cache directory,
  a bucket or an entry is never read or written through, and only regular files are read.

Entries are written to a temporary file and renamed into place, so concurrent runs never
see half an entry; a temporary file left by a killed run is removed once it is an hour old,
the next time a run writes into its subdirectory (so a warm run costs nothing more). An
unreadable, foreign or forged entry is a miss (and is rewritten). A cache that cannot be
used (no key, a symlinked cache directory, a read-only disk) never fails the lint.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import hmac
import importlib.util
import json
import os
import re
import secrets
import stat
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from torchlint import __version__
from torchlint.finding import Finding, Severity
from torchlint.fixes import Fix
from torchlint.noqa import Suppressions
from torchlint.project import Facts, FileRecord
from torchlint.results import FileResult
from torchlint.rule import rule_index

FORMAT = 25  # 3: signed entries; 4: the record carries the project index (record.index); 5: the index names classes inside functions, TL005 facts name project classes; 6: positions in facts are spans (finding.Span); 7: suppressions carry noqa directives and problems (TL901/TL902); 8: records carry a notebook's cells; 9: findings carry their fix (torchlint.fixes); 10: noqa directives carry their line's text (TL901's fix); 11: function summaries say returns_eval_model, TL011 pending facts name imported factories; 12: noqa problems say whether they are free text (TL902); 13: TL004 facts carry returned optimizers and lr overwrites, TL006 follows project base classes; 14: TL016 facts are a dict (unpinned, deferred loads, written paths); 15: the run pack (Cache.open_pack); 16: TL003 facts name the classes that differentiate in their own methods; 17: records say why a file was not analysed (unanalysed); 18: TL003 facts name what calls could call (called), call sites come on demand; 19: the project pass's memo is keyed by what it reads of each record (FileRecord.project_digest) and names the files it demanded facts of; 20: with a digest of the facts it read of each (the memo holds while they are the same); 21: a notebook cell may carry the indentation IPython strips ([number, start, indent]); 22: and the lines IPython syntax was masked on ([-1, line, ...]); 23: records name a notebook's cells that were not checked (skipped_cells); 24: records carry the demanded facts the ordinary pass gathered (demanded: Rule.gathers_demanded); 25: TL006 helpers carry the code their parameters' defaults rule out (guarded), entries how they call imported names (shapes)
TAG = "Signature: 8a477f597d28d172789f06886806bc55\n# This file is a cache directory tag created by torchlint.\n"

KEY_ENV = "TORCHLINT_CACHE_KEY_FILE"  # where the signing key lives, instead of the user's cache directory
KEY_BYTES = 32
MAX_ENTRY_BYTES = 64 << 20  # an entry is a few kilobytes (a run pack, about 150 bytes a file); a bigger file is not ours
STALE_TMP_SECONDS = 3600  # a temporary file this old belongs to a run that was killed

# An entry's bytes: _HEAD + 64 hex digits of its signature + _BODY + the JSON body + b"}"
# (itself valid JSON, so tools can read it). The signature is keyed BLAKE2b over the body.
_HEAD = b'{"mac":"'
_BODY = b'","entry":'
_MAC_END = len(_HEAD) + 64
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
_BODY_START = _MAC_END + len(_BODY)


# -- what a result depends on ------------------------------------------------------------

def python_version() -> str:
    """The parser's grammar is the running Python's: a file that is TL000 on 3.11 may parse on 3.12."""
    return f"{sys.implementation.name}-{'.'.join(map(str, sys.version_info[:3]))}"


_VERSION_LINE = re.compile(r"""^__version__\s*=\s*(?:version\s*=\s*)?["']([^"']+)["']""", re.MULTILINE)


@functools.lru_cache(maxsize=1)
def libcst_version() -> str:
    """LibCST's version, read from its ``_version.py`` without importing LibCST (a run whose
    every file is cached never imports it), else from its installed metadata."""
    spec = importlib.util.find_spec("libcst")
    if spec is not None and spec.origin:
        try:
            found = _VERSION_LINE.search((Path(spec.origin).parent / "_version.py").read_text(encoding="utf-8"))
        except OSError:
            found = None
        if found:
            return found.group(1)
    from importlib.metadata import version  # pragma: no cover - a LibCST without its version module

    return version("libcst")


@functools.lru_cache(maxsize=1)
def code_stamp() -> str:
    """The size and modification time of every module of torchlint itself: an edited
    checkout (an editable install, a development tree) gets a fresh cache, as a new release
    does through ``__version__``. About 200 ``stat`` calls (under a millisecond)."""
    root = Path(__file__).resolve().parent
    stamp = hashlib.blake2b(digest_size=16)
    for directory, subdirs, files in os.walk(root):
        subdirs[:] = sorted(d for d in subdirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith(".py"):
                try:
                    info = os.stat(os.path.join(directory, name))
                except OSError:
                    continue
                stamp.update(f"{directory[len(str(root)):]}/{name}:{info.st_size}:{info.st_mtime_ns};".encode())
    return stamp.hexdigest()


def settings_key(enabled: frozenset[str], rule_options: dict[str, dict[str, Any]]) -> str:
    blob = json.dumps({"v": __version__, "f": FORMAT, "python": python_version(), "libcst": libcst_version(),
                       "code": code_stamp(), "enabled": sorted(enabled), "options": rule_options},
                      sort_keys=True, default=str)
    return hashlib.blake2b(blob.encode(), digest_size=16).hexdigest()


# -- the signing key ---------------------------------------------------------------------

def key_file() -> Path:
    """``$TORCHLINT_CACHE_KEY_FILE``, else ``$XDG_CACHE_HOME/torchlint/key``, else
    ``~/.cache/torchlint/key``: outside any repository, one per user."""
    override = os.environ.get(KEY_ENV)
    if override:
        return Path(override)
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache"
    return base / "torchlint" / "key"


def load_key(path: Path) -> bytes:
    """The key in ``path``, created first if missing: random, mode 0600, made atomically (a
    key another run creates meanwhile wins, never a half-written one). ``OSError`` or
    ``ValueError`` when there is none to be had."""
    try:
        return _read_key(path)
    except FileNotFoundError:
        pass
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".key-")  # mode 0600
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(secrets.token_bytes(KEY_BYTES))
        try:
            os.link(tmp, path)  # fails if it exists: never replaces a key in use
        except FileExistsError:
            pass
        except OSError:  # a file system without hard links
            if not os.path.lexists(path):
                os.replace(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
    return _read_key(path)


def _read_key(path: Path) -> bytes:
    from torchlint.bounded import read_file

    key = read_file(path, 4096)
    if len(key) != KEY_BYTES:
        raise ValueError(f"{path} is not a torchlint cache key ({len(key)} bytes, expected {KEY_BYTES}); delete it")
    return key


# -- checking an entry -------------------------------------------------------------------

_FINDING_KEYS = frozenset({"rule", "name", "severity", "path", "message", "line", "column", "end_line", "end_column"})
_FINDING_OPTIONAL = frozenset({"confirmed", "extra", "fix"})
_RECORD_KEYS = frozenset({"path", "module_name", "is_package", "imports", "star_imports", "facts", "index",
                          "suppressions", "unanalysed", "cells", "skipped_cells", "demanded"})
_SEVERITIES = frozenset(s.value for s in Severity)


class Forged(ValueError):
    """An entry that is not what this torchlint writes."""


def _require(condition: bool) -> None:
    if not condition:
        raise Forged


def _strings(items: Any) -> bool:
    return type(items) is list and all(type(s) is str for s in items)


def _finding(item: Any, path: str, names: dict[str, str]) -> Finding:
    _require(type(item) is dict and _FINDING_KEYS <= item.keys() and item.keys() - _FINDING_KEYS <= _FINDING_OPTIONAL)
    rule, name, severity, message = item["rule"], item["name"], item["severity"], item["message"]
    line, column, end_line, end_column = item["line"], item["column"], item["end_line"], item["end_column"]
    _require(item["path"] == path and type(rule) is str and names.get(rule) == name and severity in _SEVERITIES)
    _require(type(message) is str and type(line) is int and type(column) is int and type(end_line) is int
             and type(end_column) is int and min(line, column, end_line, end_column) >= 0)
    _require(item.get("confirmed") in (None, True, False) and type(item.get("extra", {})) is dict)
    _require("fix" not in item or Fix.valid_json(item["fix"]))
    return Finding.from_dict(item)


def _digest(value: Any) -> bool:
    """A ``FileRecord.project_digest``: 40 lower-case hexadecimal digits."""
    return type(value) is str and len(value) == 40 and all(c in "0123456789abcdef" for c in value)


def _suppressions(data: Any) -> Suppressions:
    _require(type(data) is dict and data.keys() == {"lines", "file", "directives", "problems"} and type(data["lines"]) is dict)
    _require(type(data["directives"]) is list and all(
        type(d) is list and len(d) == 6 and all(type(n) is int for n in d[:3]) and (d[3] is None or _strings(d[3]))
        and type(d[4]) is list and all(type(n) is int for n in d[4]) and type(d[5]) is str for d in data["directives"]))
    _require(type(data["problems"]) is list and all(
        type(p) is list and len(p) == 5 and all(type(n) is int for n in p[:3]) and type(p[3]) is str
        and type(p[4]) is bool for p in data["problems"]))
    _require(all(type(k) is str and k.isdigit() and (v is None or _strings(v)) for k, v in data["lines"].items()))
    _require(data["file"] is None or data["file"] is False or _strings(data["file"]))
    return Suppressions.from_json(data)


_CLASS_FACT = {"name": str, "bases": list, "methods": list, "self_attrs": list}
_FUNCTION_FACT = ("trains", "evaluates", "seeds", "builds_optimizer", "returns_eval_model")


def _index(data: Any) -> bool:
    """The shape ``torchlint.semantic.index.FileIndex.to_json`` writes: {} or classes and functions."""
    if type(data) is not dict or not data.keys() <= {"classes", "functions"}:
        return False
    classes, functions = data.get("classes", []), data.get("functions", {})
    return (type(classes) is list
            and all(type(c) is dict and c.keys() == _CLASS_FACT.keys()
                    and all(type(c[k]) is t for k, t in _CLASS_FACT.items())
                    and all(_strings(c[k]) for k in ("bases", "methods", "self_attrs")) for c in classes)
            and type(functions) is dict
            and all(type(n) is str and type(f) is dict and f.keys() == set(_FUNCTION_FACT)
                    and all(type(f[k]) is bool for k in _FUNCTION_FACT) for n, f in functions.items()))


# A pack's light record: what the run needs of an unchanged file once the project pass is
# remembered (suppressions for noqa and TL901/TL902, a notebook's cells); imports, the index
# and the facts stay in the file's own entry (``Cache.complete``).
_LIGHT_KEYS = frozenset({"module_name", "is_package", "suppressions", "unanalysed", "cells", "skipped_cells"})


def _light(data: Any, path: str) -> FileRecord:
    """The light part of a record (``_LIGHT_KEYS`` of ``data``), checked."""
    _require(type(data["module_name"]) is str and type(data["is_package"]) is bool and type(data["unanalysed"]) is str
             and type(data["skipped_cells"]) is str)
    cells = data["cells"]
    _require(type(cells) is list and all(type(c) is list and (len(c) in (2, 3) or c and c[0] == -1)
                                         and all(type(n) is int for n in c) for c in cells))
    return FileRecord(path=path, module_name=data["module_name"], is_package=data["is_package"], unanalysed=data["unanalysed"],
                      suppressions=_suppressions(data["suppressions"]), cells=cells, skipped_cells=data["skipped_cells"])


def _light_record(data: Any, path: str) -> FileRecord:
    """A run pack's light record."""
    _require(type(data) is dict and data.keys() == _LIGHT_KEYS)
    return _light(data, path)


def _light_json(record: FileRecord) -> dict:
    whole = record.to_json()
    return {key: whole[key] for key in _LIGHT_KEYS}


def _record(data: Any, path: str, names: dict[str, str]) -> FileRecord:
    """A file entry's whole record: the light part and imports, facts (those gathered on demand too) and the index."""
    _require(type(data) is dict and data.keys() == _RECORD_KEYS and data["path"] == path)
    imports, facts, demanded = data["imports"], data["facts"], data["demanded"]
    _require(type(imports) is dict and all(type(k) is str and type(v) is str for k, v in imports.items()))
    _require(_strings(data["star_imports"]))
    for each in (facts, demanded):
        _require(type(each) is dict and all(k in names and type(v) is str for k, v in each.items()))
    _require(_index(data["index"]))
    record = _light(data, path)
    record.imports, record.star_imports, record.index = imports, data["star_imports"], data["index"]
    record.facts = Facts.from_encoded({code: text.encode("utf-8") for code, text in facts.items()})
    record.demanded = Facts.from_encoded({code: text.encode("utf-8") for code, text in demanded.items()})
    return record


# -- the cache ---------------------------------------------------------------------------

class Cache:
    """Per-file results under ``directory``. ``secret`` signs entries (default: the user's
    key, see ``key_file``); ``disabled`` says why the cache is off for this run, if it is."""

    def __init__(self, directory: Path, enabled: frozenset[str], rule_options: dict[str, dict[str, Any]],
                 *, secret: bytes | None = None):
        self.directory = Path(os.path.abspath(directory))
        self.settings = settings_key(enabled, rule_options)
        self.bucket = self.directory / f"v{FORMAT}" / self.settings
        self._bucket = str(self.bucket)
        self.hits = 0
        self.misses = 0
        self.disabled: str | None = None
        self._secret = secret or b""
        self._names = {r.code: r.name for r in rule_index()}
        self._real_dirs: set[str] = set()  # directories checked to be directories, not links
        self._writable: bool | None = None  # None: not tried yet
        self._swept: set[str] = set()  # subdirectories written to (and cleaned) in this run
        # The run pack (``open_pack``): path -> [entry key, findings, light record] as read,
        # and the project pass's memos it holds; what this run used, to write it back.
        self._pack_key: str | None = None
        self._pack: dict[str, Any] = {}
        self._pack_project: dict[str, Any] = {}
        self._pack_stale = False
        self._used: dict[str, list] = {}
        self._used_project: dict[str, list] = {}
        if os.path.islink(self.directory):
            self.disabled = f"{self.directory} is a symbolic link: not followed; running without the cache"
        elif secret is None:
            try:
                self._secret = load_key(key_file())
            except (OSError, RuntimeError, ValueError) as exc:  # RuntimeError: no home directory
                self.disabled = f"no cache key ({exc}); running without the cache"

    def key(self, path: str, data: bytes, settings: str = "") -> str:
        """An entry's key: the file's bytes and path, and ``settings`` (the ``settings_key``
        of a file linted with settings other than the cache's own, else empty)."""
        h = hashlib.blake2b(data, digest_size=20)
        h.update(b"\0" + path.encode("utf-8", "surrogatepass"))
        if settings:
            h.update(b"\0" + settings.encode())
        return h.hexdigest()

    def _entry(self, key: str) -> str:
        return os.path.join(self._bucket, key[:2], f"{key}.json")

    def _sign(self, body: bytes) -> bytes:
        return hashlib.blake2b(body, key=self._secret, digest_size=32).hexdigest().encode()

    # -- staying inside the cache directory

    def _real_dir(self, path: str) -> bool:
        """``path`` is a directory, not a symbolic link (remembered once true)."""
        if path in self._real_dirs:
            return True
        try:
            real = stat.S_ISDIR(os.lstat(path).st_mode)
        except OSError:
            return False
        if real:
            self._real_dirs.add(path)
        return real

    def _inside(self, subdir: str) -> bool:
        """Every directory from the cache directory down to the bucket's ``subdir`` is a real one."""
        if subdir in self._real_dirs:
            return True
        chain = (str(self.directory), str(self.bucket.parent), self._bucket, subdir)
        return all(self._real_dir(d) for d in chain)

    def _read(self, entry: str) -> bytes | None:
        """An entry's bytes: a regular file, not a link, inside the cache directory."""
        if not self._inside(os.path.dirname(entry)):
            return None
        try:
            fd = os.open(entry, _READ_FLAGS)
        except OSError:
            return None
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_ENTRY_BYTES:
                return None
            data = os.read(fd, info.st_size + 1)
            return data if len(data) == info.st_size else None
        finally:
            os.close(fd)

    # -- reading

    def get(self, path: str, key: str, *, whole: bool = False) -> FileResult | None:
        """The result stored for ``path`` under ``key``: from the run pack where it holds
        this key (a light result, see ``FileResult.light``) unless ``whole``, else from the
        file's entry."""
        result = None if self.disabled else ((None if whole else self._from_pack(path, key)) or self._load(path, key))
        if result is None:
            self.misses += 1
        else:
            self.hits += 1
        return result

    def complete(self, result: FileResult) -> FileResult | None:
        """A light result made whole from its file's own entry; None when that entry is
        gone or not valid (the file must then be analysed again)."""
        if not result.light:
            return result
        full = None if self.disabled or result.key is None else self._load(result.path, result.key)
        if full is not None:
            full.key = result.key
        return full

    def _verified(self, raw: bytes | None) -> bytes | None:
        """An entry's JSON body, if the entry is well formed and signed by this machine's key."""
        if raw is None or not (raw.startswith(_HEAD) and raw[_MAC_END:_BODY_START] == _BODY and raw.endswith(b"}")):
            return None
        body = raw[_BODY_START:-1]
        if not hmac.compare_digest(raw[len(_HEAD):_MAC_END], self._sign(body)):
            return None  # not written by this machine's torchlint
        return body

    def _body(self, key: str) -> bytes | None:
        """The JSON body of the entry at ``key``: read, well formed and signed, else None."""
        try:
            return self._verified(self._read(self._entry(key)))
        except OSError:
            return None

    def _load(self, path: str, key: str) -> FileResult | None:
        body = self._body(key)
        if body is None:
            return None
        try:
            data = json.loads(body)
            _require(type(data) is dict and data.keys() == {"key", "settings", "path", "findings", "record"})
            _require(data["key"] == key and data["settings"] == self.settings and data["path"] == path)
            _require(type(data["findings"]) is list)
            findings = [_finding(f, path, self._names) for f in data["findings"]]
            record = _record(data["record"], path, self._names)
        except (ValueError, TypeError, KeyError, RecursionError):  # Forged is a ValueError
            return None
        return FileResult(path, findings, record)

    # -- the project pass's memo (``run._project_pass``)

    def project_key(self, settings: str, torch_pin: list | None, files: list[tuple[str, str | None]]) -> str:
        """The key of a project pass: the rules' settings, the torch pin and every file's
        (path, ``FileRecord.project_digest``), in path order (the run pack's: its paths)."""
        blob = json.dumps(["project", settings, torch_pin, files], separators=(",", ":"))
        return hashlib.blake2b(blob.encode("utf-8", "surrogatepass"), digest_size=20).hexdigest()

    def get_project(self, key: str) -> "tuple[list[Finding], dict[str, list]] | None":
        """The project pass's findings stored under ``key`` (in the run pack, else in their
        own entry), and the files it demanded facts of (path -> [entry key of the bytes it read
        them from, rule code -> digest of the facts it read]: ``run._demands_hold``); None when
        absent or not valid."""
        if self.disabled:
            return None
        stored = self._pack_project.get(key)
        if stored is None:
            stored = self._stored(key, "project")
            if stored is None:
                return None
        found = self._project_findings(stored)
        if found is not None:
            self._used_project[key] = stored
        return found

    def _project_findings(self, stored: Any) -> "tuple[list[Finding], dict[str, list]] | None":
        try:
            _require(type(stored) is dict and stored.keys() == {"findings", "demanded"})
            _require(type(stored["findings"]) is list and type(stored["demanded"]) is dict)
            _require(all(type(p) is str and type(v) is list and len(v) == 2 and (v[0] is None or type(v[0]) is str)
                         and type(v[1]) is dict and all(type(c) is str and type(d) is str for c, d in v[1].items())
                         for p, v in stored["demanded"].items()))
            return [_finding(f, f.get("path") if type(f) is dict and type(f.get("path")) is str else "", self._names)
                    for f in stored["findings"]], dict(stored["demanded"])
        except (ValueError, TypeError, KeyError, RecursionError):
            return None

    def put_project(self, key: str, findings: list[Finding], demanded: dict[str, list]) -> None:
        stored = {"findings": [f.to_dict() for f in findings], "demanded": demanded}
        self._used_project[key] = stored
        self._store(key, "project", stored)

    def _stored(self, key: str, field: str) -> Any:
        """The value an entry of its own holds under ``field`` (``_store``): read, signed, of
        this key and these settings; None when absent or not valid."""
        body = self._body(key)
        if body is None:
            return None
        try:
            data = json.loads(body)
            _require(type(data) is dict and data.keys() == {"key", "settings", field})
            _require(data["key"] == key and data["settings"] == self.settings)
            return data[field]
        except (ValueError, TypeError, KeyError, RecursionError):
            return None

    def _store(self, key: str, field: str, value: Any) -> None:
        self._write(key, {"key": key, "settings": self.settings, field: value})

    # -- facts a project pass demanded of a file (``run.demander``)

    def _demanded_key(self, key: str, code: str) -> str:
        return hashlib.blake2b(f"demanded\0{code}\0{key}".encode(), digest_size=20).hexdigest()

    def get_demanded(self, key: str, code: str) -> Any:
        """Rule ``code``'s demanded facts of the file whose bytes and settings give ``key``
        (``Cache.key``), as stored; None when absent or not valid."""
        return None if self.disabled else self._stored(self._demanded_key(key, code), "demanded")

    def put_demanded(self, key: str, code: str, facts: Any) -> None:
        self._store(self._demanded_key(key, code), "demanded", facts)

    # -- the run pack: a warm run reads one entry, not one per file

    def open_pack(self, paths: list[str]) -> None:
        """Read the run pack of this set of ``paths``: each file's entry key, findings and
        light record, and the project pass's memos, as the last run over the same paths
        left them. A file whose key still matches is then served from it (``get``)."""
        self._pack_key = self.project_key(self.settings, None, [("pack", p) for p in sorted(set(paths))])
        self._pack, self._pack_project, self._used, self._used_project = {}, {}, {}, {}
        body = None if self.disabled else self._body(self._pack_key)
        if body is None:
            return
        try:
            data = json.loads(body)
            _require(type(data) is dict and data.keys() == {"key", "settings", "files", "project"})
            _require(data["key"] == self._pack_key and data["settings"] == self.settings)
            _require(type(data["files"]) is dict and type(data["project"]) is dict)
            self._pack, self._pack_project = data["files"], data["project"]
        except (ValueError, TypeError, KeyError, RecursionError):
            self._pack_stale = True  # rewritten at the end of the run

    def pack_path(self) -> Path | None:
        """Where the run pack of the last ``open_pack`` lives (None before one)."""
        return None if self._pack_key is None else Path(self._entry(self._pack_key))

    def _from_pack(self, path: str, key: str) -> FileResult | None:
        stored = self._pack.get(path)
        if stored is None:
            return None
        try:
            _require(type(stored) is list and len(stored) == 4 and stored[0] == key and type(stored[1]) is list)
            _require(_digest(stored[3]))
            findings = [_finding(f, path, self._names) for f in stored[1]]
            record = _light_record(stored[2], path)
        except (ValueError, TypeError, KeyError, RecursionError):
            return None
        self._used[path] = stored
        return FileResult(path, findings, record, light=True, digest=stored[3])

    def save_pack(self, results: list[FileResult]) -> None:
        """Write the run pack for the paths of ``open_pack`` from this run's ``results``
        (those with a key: analysed without error, or read from the cache) and the project
        memos it used; nothing is written when the pack read held exactly that."""
        if self._pack_key is None or self.disabled:
            return
        files: dict[str, list] = {}
        for result in results:
            if result.key is None or result.errors:
                continue
            stored = self._used.get(result.path)
            files[result.path] = stored if stored is not None and stored[0] == result.key else [
                result.key, [f.to_dict() for f in result.findings], _light_json(result.record), result.project_digest()]
        if not self._pack_stale and files == self._pack and self._used_project.keys() <= self._pack_project.keys():
            return
        self._write(self._pack_key, {"key": self._pack_key, "settings": self.settings, "files": files,
                                     "project": self._used_project})

    # -- writing

    def _prepare(self) -> bool:
        """Make the bucket, once per run; False if entries cannot be written there."""
        if self._writable is None:
            self._writable = False
            try:
                for directory in (self.directory, self.bucket.parent, self.bucket):
                    directory.mkdir(parents=directory == self.directory, exist_ok=True)
                    if not self._real_dir(str(directory)):
                        self.disabled = f"{directory} is a symbolic link or not a directory: not followed"
                        return False
                _create(self.directory / "CACHEDIR.TAG", TAG)
                _create(self.directory / ".gitignore", "# Created by torchlint automatically.\n*\n")
            except OSError:
                return False  # read-only: entries already there are still read
            self._writable = True
        return self._writable

    def put(self, key: str, result: FileResult) -> None:
        if result.errors:  # a crashed rule's result is incomplete
            return
        self._write(key, {
            "key": key,
            "settings": self.settings,
            "path": result.path,
            "findings": [f.to_dict() for f in result.findings],
            "record": result.record.to_json(),
        })

    def _write(self, key: str, payload: dict) -> None:
        if self.disabled or not self._prepare():
            return
        try:
            entry = self._entry(key)
            subdir = os.path.dirname(entry)
            if subdir not in self._swept:  # the first write there in this run
                with contextlib.suppress(FileExistsError):
                    os.mkdir(subdir)
                if not self._real_dir(subdir):
                    return
                _remove_stale_temporaries(subdir)
                self._swept.add(subdir)
            body = json.dumps(payload, separators=(",", ":")).encode("utf-8")
            if len(body) > MAX_ENTRY_BYTES - 256:
                return  # it would never be read back
            _write_atomically(entry, b"".join((_HEAD, self._sign(body), _BODY, body, b"}")))
        except (OSError, ValueError, TypeError):
            pass  # a read-only or full disk (or an unencodable fact) must not fail the lint


def _write_atomically(target: str, data: bytes) -> None:
    """Write a temporary file beside ``target`` and rename it over ``target`` (which replaces
    a link there rather than writing through it)."""
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(target), prefix=".tmp-", suffix=".json")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _create(path: Path, text: str) -> None:
    """Create ``path`` with ``text`` unless something (a file, a link) is already there."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags, 0o644)
    except FileExistsError:
        return
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)


def _remove_stale_temporaries(directory: str) -> None:
    """Remove ``.tmp-*`` files older than an hour (left by runs killed mid-write) from one
    subdirectory of a bucket; links and anything else are left alone."""
    cutoff = time.time() - STALE_TMP_SECONDS
    with contextlib.suppress(OSError), os.scandir(directory) as entries:
        for entry in entries:
            if (entry.name.startswith(".tmp-") and entry.is_file(follow_symlinks=False)
                    and entry.stat(follow_symlinks=False).st_mtime < cutoff):
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)


# -- torchlint clean --------------------------------------------------------------------------

CACHE_NAME = ".torchlint_cache"


def is_cache(directory: Path) -> bool:
    """Whether ``directory`` is a torchlint cache: a real directory (not a link) holding our
    ``CACHEDIR.TAG``, or one named ``.torchlint_cache``."""
    if os.path.islink(directory) or not directory.is_dir():
        return False
    if directory.name == CACHE_NAME:
        return True
    try:
        with open(directory / "CACHEDIR.TAG", "rb") as tag:
            return tag.read(len(TAG) + 1) == TAG.encode()
    except OSError:
        return False


def find_caches(start: Path, extra: list[Path] = ()) -> list[Path]:
    """The caches ``torchlint clean`` removes: every ``.torchlint_cache`` directory under
    ``start`` (links not followed, ``.git`` not entered) and those of ``extra`` (a project's
    cache directory) that are caches (``is_cache``), each once, in order."""
    found: list[Path] = []
    for directory in extra:
        if is_cache(Path(directory)):
            found.append(Path(os.path.abspath(directory)))
    for dirpath, dirnames, _ in os.walk(start, followlinks=False):
        keep = []
        for name in dirnames:
            if name == CACHE_NAME:
                path = Path(dirpath, name)
                if is_cache(path):
                    found.append(Path(os.path.abspath(path)))
            elif name != ".git":
                keep.append(name)
        dirnames[:] = sorted(keep)
    unique: list[Path] = []
    for path in found:
        if path not in unique:
            unique.append(path)
    return unique


def remove_cache(directory: Path) -> None:
    """Remove the cache ``directory`` and everything in it (links in it are removed, never
    followed)."""
    import shutil

    shutil.rmtree(directory)
