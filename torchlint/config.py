"""Configuration: ``[tool.torchlint]`` in ``pyproject.toml`` or a ``torchlint.toml``.

Every key and value is checked; a bad one is a ``ConfigError`` (exit 2) that names the
file, the key and what is accepted.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from torchlint import bounded
from torchlint.sizes import SIZE_UNITS
from torchlint.errors import ConfigError, UsageError
from torchlint.rule import Rule, RuleInfo, rule_index

if TYPE_CHECKING:
    from torchlint.finding import Finding

TOP_LEVEL_KEYS = {
    "select": "list of rule codes or prefixes",
    "ignore": "list of rule codes or prefixes",
    "extend-select": "list of rule codes or prefixes",
    "extend-ignore": "list of rule codes or prefixes (added to ignore)",
    "exclude": "list of gitignore-style patterns (replaces the defaults)",
    "extend-exclude": "list of gitignore-style patterns",
    "extend-include": "list of gitignore-style patterns of more files for directory runs (e.g. \"*.pyw\")",
    "respect-gitignore": "true or false",
    "per-file-ignores": 'table of pattern = ["TL001", ...]',
    "extend-per-file-ignores": 'table of pattern = ["TL001", ...] (added to per-file-ignores)',
    "cache-dir": "a directory path",
    "max-file-size": 'bytes (an integer) or a size such as "4MB" or "10MiB"',
    "trace": "table of shape-trace settings",
    "target-version": "the oldest Python whose grammar the code must parse in: py310 ... py314",
    "extend": "path of a configuration file whose settings this one inherits (relative to this file)",
    "fix": "true or false: apply fixes as --fix does",
    "unsafe-fixes": "true or false: apply unsafe fixes too, as --unsafe-fixes does",
    "fixable": "list of rule codes or prefixes whose fixes are applied (default: ALL)",
    "unfixable": "list of rule codes or prefixes whose fixes are never applied",
}

DEFAULT_EXCLUDE = [
    ".bzr", ".direnv", ".eggs", ".git", ".hg", ".mypy_cache", ".nox", ".pants.d", ".pytype",
    ".ruff_cache", ".svn", ".tox", ".venv", "venv", "__pypackages__", "_build", "buck-out",
    "build", "dist", "node_modules", "site-packages", ".torchlint_cache", "__pycache__", ".ipynb_checkpoints",
]

DEFAULT_MAX_FILE_SIZE = 4_000_000  # bytes


@dataclass
class Settings:
    """Everything a run needs, resolved from defaults, the config file and the CLI."""

    enabled: frozenset[str]
    rule_options: dict[str, dict[str, Any]]
    exclude: list[str] = field(default_factory=lambda: list(DEFAULT_EXCLUDE))
    extend_exclude: list[str] = field(default_factory=list)
    # Files a directory walk lints besides *.py, *.pyi and *.ipynb (read as Python; as a
    # notebook when the name ends in .ipynb).
    extend_include: list[str] = field(default_factory=list)
    respect_gitignore: bool = True
    per_file_ignores: dict[str, frozenset[str]] = field(default_factory=dict)
    force_exclude: bool = False
    config_path: Path | None = None
    # Patterns in exclude/per-file-ignores are relative to this directory.
    root: Path = field(default_factory=Path.cwd)
    cache_dir: Path | None = None
    trace: dict[str, Any] = field(default_factory=dict)
    # A larger file is TL000 "too large to analyse", never parsed (LibCST takes ~0.4-0.75
    # GB of memory and ~13 s per MB of source).
    max_file_size: int = DEFAULT_MAX_FILE_SIZE
    # The configuration files ``config_path`` inherits from through ``extend``, nearest first.
    extends: list[Path] = field(default_factory=list)
    # per-file-ignores patterns inherited through ``extend``: pattern -> the directory of
    # the file that wrote it (the others are relative to ``root``).
    ignore_bases: dict[str, Path] = field(default_factory=dict)
    # Autofix (``torchlint.fixes``): ``fix`` and ``unsafe_fixes`` as the flags; the codes whose
    # fixes may be applied (``fixable`` less ``unfixable``).
    fix: bool = False
    unsafe_fixes: bool = False
    fixable: frozenset[str] = field(default_factory=lambda: frozenset(r.code for r in rule_index()))
    unfixable: frozenset[str] = frozenset()

    def options_for(self, rule: RuleInfo | type[Rule]) -> dict[str, Any]:
        return self.rule_options.get(rule.code) or rule.default_options()

    def applies_fix(self, finding: "Finding", *, unsafe: bool | None = None) -> bool:
        """Whether ``--fix`` applies ``finding``'s fix: it has one, of its rule is fixable and
        not unfixable, and it is safe or unsafe fixes are on (``unsafe``, default: the setting)."""
        fix = finding.fix
        if fix is None or finding.rule not in self.fixable or finding.rule in self.unfixable:
            return False
        return fix.applicability == "safe" or (self.unsafe_fixes if unsafe is None else unsafe)


# -- locating and reading ---------------------------------------------------------------

def find_config(start: Path) -> Path | None:
    """The nearest ``torchlint.toml``, or ``pyproject.toml`` with a ``[tool.torchlint]``
    table, in ``start`` or its parents."""
    start = start.resolve()
    if start.is_file():
        start = start.parent
    for directory in (start, *start.parents):
        found = config_in(directory)
        if found is not None:
            return found
    return None


def config_in(directory: Path) -> Path | None:
    """``directory``'s ``torchlint.toml``, else its ``pyproject.toml`` if that has a
    ``[tool.torchlint]`` table, else None."""
    candidate = directory / "torchlint.toml"
    if candidate.is_file():
        return candidate
    candidate = directory / "pyproject.toml"
    if candidate.is_file():
        try:
            text = bounded.read_text(candidate, bounded.CONFIG_LIMIT)
        except OSError:
            return None
        data = parse_toml(candidate, text)  # it may hold our table: an invalid one is an error
        if isinstance(data.get("tool"), dict) and "torchlint" in data["tool"]:
            return candidate
    return None


def outermost_config(start: Path, stop: Path | None) -> Path | None:
    """The configuration file highest above ``start`` (a directory), not above ``stop``
    (the git root) when given: the project's own configuration."""
    found = None
    for directory in (start, *start.parents):
        found = config_in(directory) or found
        if directory == stop:
            break
    return found


def parse_toml(path: Path, text: str) -> dict[str, Any]:
    """Parse a config file's text; invalid TOML (nested too deeply, an integer of thousands
    of digits) is a ``UsageError`` naming the file."""
    try:
        return bounded.loads_toml(text)
    except bounded.ParseError as exc:
        raise UsageError(f"{path}: {exc}") from None


def read_chain(config_path: Path) -> list[tuple[Path, dict[str, Any]]]:
    """``config_path``'s table and those it inherits through ``extend`` (a path relative to
    the file naming it), the farthest first. A cycle or a missing file is a ``UsageError``."""
    chain: list[tuple[Path, dict[str, Any]]] = []
    path = Path(os.path.realpath(config_path))
    while True:
        if any(seen == path for seen, _ in chain):
            cycle = " -> ".join(str(p) for p in [*(p for p, _ in chain), path])
            raise UsageError(f"configuration files extend each other in a cycle: {cycle}")
        table = read_table(path)
        chain.append((path, table))
        if "extend" not in table:
            return list(reversed(chain))
        target = table["extend"]
        if not isinstance(target, str):
            raise ConfigError(str(path), "extend", f"expected a path string, got {target!r}")
        following = Path(os.path.realpath(path.parent / target))
        if not following.is_file():
            raise UsageError(f"{path}: extend = {target!r}: no such file {following}")
        path = following


def read_table(path: Path) -> dict[str, Any]:
    try:
        text = bounded.read_text(path, bounded.CONFIG_LIMIT)
    except OSError as exc:
        raise UsageError(f"cannot read config file {path}: {exc.strerror or exc}") from None
    data = parse_toml(path, text)
    if path.name == "pyproject.toml":
        table = data.get("tool", {}).get("torchlint", {})
    else:
        table = data.get("tool", {}).get("torchlint", data) if "tool" in data else data
    if not isinstance(table, dict):
        raise ConfigError(str(path), "tool.torchlint", "must be a table")
    return table


# -- selection ---------------------------------------------------------------------------

def expand_selector(selector: str, source: str, key: str) -> set[str]:
    """``TL001`` or ``missing-zero-grad`` -> {TL001}; ``TL00`` -> every code starting so;
    ``ALL`` -> every rule."""
    codes = [r.code for r in rule_index()]
    by_name = {r.name: r.code for r in rule_index()}
    if selector.strip().lower() in by_name:
        return {by_name[selector.strip().lower()]}
    sel = selector.strip().upper()
    if sel == "ALL":
        return set(codes)
    matched = {c for c in codes if c.startswith(sel)} if sel else set()
    if not matched:
        raise ConfigError(source, key, f"unknown rule code or prefix {selector!r}", ", ".join(codes) + ", ALL")
    return matched


def resolve_selection(
    layers: list[tuple[str, dict[str, list[str] | None]]],
) -> frozenset[str]:
    """Apply (source, {select, extend-select, ignore}) layers in order, config then CLI.

    A layer's ``select`` replaces everything before it; ``extend-select`` adds; ``ignore``
    removes.
    """
    enabled = {r.code for r in rule_index() if r.default_enabled}
    for source, layer in layers:
        if layer.get("select") is not None:
            enabled = set()
            for s in layer["select"]:
                enabled |= expand_selector(s, source, "select")
        for s in layer.get("extend-select") or ():
            enabled |= expand_selector(s, source, "extend-select")
        for s in layer.get("ignore") or ():
            enabled -= expand_selector(s, source, "ignore")
    return frozenset(enabled)


# -- validation --------------------------------------------------------------------------

def did_you_mean(word: str, candidates) -> str:
    """``", did you mean `x`?"`` for the candidate closest to a misspelt ``word`` (difflib),
    or ``""`` when none is close."""
    import difflib

    candidates = list(candidates)
    close = difflib.get_close_matches(word, candidates, n=1, cutoff=0.6)
    if not close:  # case or separators: extend_exclude, Extend-Exclude
        folded = {c.lower().replace("_", "-"): c for c in candidates}
        close = [folded[k] for k in difflib.get_close_matches(word.lower().replace("_", "-"), folded, n=1, cutoff=0.6)]
    return f", did you mean `{close[0]}`?" if close else ""


def _str_list(value: Any, source: str, key: str) -> list[str]:
    if isinstance(value, str):
        raise ConfigError(source, key, f"expected a list, got the string {value!r} (write [{value!r}])")
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(source, key, f"expected a list of strings, got {value!r}")
    return list(value)


def _patterns(value: Any, source: str, key: str) -> list[str]:
    """A list of gitignore-style patterns, each one checked: a pattern that matches nothing
    in git (``!``, ``\\``, ``[z-a]``) is an error naming it (``torchlint.gitignore``)."""
    patterns = _str_list(value, source, key)
    for pattern in patterns:
        _check_pattern(pattern, source, key)
    return patterns


def _check_pattern(pattern: str, source: str, key: str) -> None:
    from torchlint.gitignore import PatternError, compile_pattern

    try:
        compile_pattern(pattern)
    except PatternError as exc:
        raise ConfigError(source, key, f"invalid pattern {pattern!r}: {exc}", "gitignore-style patterns") from None


_SIZE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*(b|kb|kib|mb|mib|gb|gib)?\s*", re.IGNORECASE)


def parse_size(value: Any, source: str, key: str) -> int:
    """A positive number of bytes: an integer, or a string such as ``"4MB"`` or ``"10MiB"``."""
    size = None
    if isinstance(value, int) and not isinstance(value, bool):
        size = value
    elif isinstance(value, str) and (match := _SIZE.fullmatch(value)):
        size = int(float(match.group(1)) * SIZE_UNITS[(match.group(2) or "b").lower()])
    if size is None or size < 1:
        raise ConfigError(source, key, f"expected a positive size, got {value!r}", TOP_LEVEL_KEYS[key])
    return size


def _rule_options(rule: RuleInfo, table: Any, source: str, inherited: dict[str, Any] | None = None) -> dict[str, Any]:
    """The rule's options: ``inherited`` (else the defaults) updated by ``table``."""
    key_prefix = rule.name
    if not isinstance(table, dict):
        raise ConfigError(source, key_prefix, "must be a table of options")
    options = dict(inherited) if inherited else rule.default_options()
    for key, value in table.items():
        spec = rule.options.get(key)
        if spec is None:
            accepted = ", ".join(sorted(rule.options)) or "no options"
            raise ConfigError(source, f"{key_prefix}.{key}",
                              f"unknown option for {rule.code}" + did_you_mean(key, rule.options), accepted)
        ok = isinstance(value, spec.kind) and not (isinstance(value, bool) and spec.kind in (int, float, (int, float)))
        if ok and spec.item_kind is not None:
            ok = all(isinstance(v, spec.item_kind) for v in value)
        if not ok:
            kind = spec.kind.__name__ if isinstance(spec.kind, type) else " or ".join(k.__name__ for k in spec.kind)
            if spec.item_kind is not None:
                kind += f" of {spec.item_kind.__name__}"
            raise ConfigError(source, f"{key_prefix}.{key}", f"expected {kind}, got {value!r}", spec.description)
        options[key] = value
    return options


def _add_per_file_ignores(into: dict[str, frozenset[str]], pfi: Any, source: str, table_key: str) -> list[str]:
    """``pattern = [codes]`` entries of a per-file-ignores table, added to ``into``; the
    patterns added."""
    if not isinstance(pfi, dict):
        raise ConfigError(source, table_key, "expected a table of pattern = [codes]")
    for pattern, codes in pfi.items():
        key = f"{table_key}.{pattern}"
        _check_pattern(pattern, source, table_key)
        expanded: set[str] = set()
        for code in _str_list(codes, source, key):
            expanded |= expand_selector(code, source, key)
        into[pattern] = into.get(pattern, frozenset()) | expanded
    return list(pfi)


def _target_version(value: Any, source: str) -> str:
    from torchlint.syntax import TARGET_VERSIONS

    if not isinstance(value, str) or value not in TARGET_VERSIONS:
        raise ConfigError(source, "target-version", f"unknown Python version {value!r}", ", ".join(TARGET_VERSIONS))
    return value


# -- command-line overrides of file settings ----------------------------------------------

def rebase_pattern(pattern: str, base: Path, root: Path) -> str | None:
    """A gitignore-style ``pattern`` written relative to ``base`` (the working directory), as
    a pattern relative to ``root`` (the settings' root) that matches the same paths under
    ``root``; None when it can match nothing there. An anchored pattern (a ``/`` before its
    end) names paths from ``base``; an unanchored one a name at any depth below ``base``."""
    import fnmatch

    if base == root:
        return pattern
    negated = pattern.startswith("!")
    text = pattern[1:] if negated else pattern
    trailing = "/" if text.endswith("/") and not text.endswith("\\/") else ""
    body = text.rstrip("/") if trailing else text
    anchored = "/" in body
    body = body.lstrip("/")
    if root in base.parents:  # the working directory is inside the root
        prefix = base.relative_to(root).as_posix()
        rebased = f"/{prefix}/{body}" if anchored else f"/{prefix}/**/{body}"
    elif base in root.parents:  # the root is inside the working directory
        if not anchored:
            rebased = body
        else:
            parts, segments = root.relative_to(base).parts, body.split("/")
            for i, part in enumerate(parts):
                if i >= len(segments):  # it names a directory above the root: everything in it
                    segments, trailing = ["**"], ""
                    break
                if segments[i] == "**":
                    segments = segments[i:]
                    break
                if not fnmatch.fnmatchcase(part, segments[i]):
                    return None
            else:
                segments = segments[len(parts):]
                if not segments:  # the root itself
                    segments, trailing = ["**"], ""
            rebased = "/" + "/".join(segments)
    else:  # apart: only a name can match
        if anchored:
            return None
        rebased = body
    return ("!" if negated else "") + rebased + trailing


@dataclass(frozen=True)
class Overrides:
    """What the command line sets over every configuration file's settings, as ruff's flags:
    ``--exclude`` (replaces ``exclude``), ``--extend-exclude`` (added to it),
    ``--per-file-ignores`` (replaces ``per-file-ignores``) and ``--extend-per-file-ignores``
    (added); their patterns are relative to ``base``, the working directory."""

    base: Path
    exclude: tuple[str, ...] | None = None
    extend_exclude: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] | None = None
    extend_per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def __bool__(self) -> bool:
        return bool(self.exclude is not None or self.extend_exclude or self.per_file_ignores is not None
                    or self.extend_per_file_ignores)

    def apply(self, settings: Settings) -> None:
        base, root = Path(os.path.realpath(self.base)), Path(os.path.realpath(settings.root))

        def rebased(patterns, flag: str) -> list[str]:
            out = []
            for pattern in patterns:
                _check_pattern(pattern, "command line", flag)
                moved = rebase_pattern(pattern, base, root)
                if moved is not None:
                    out.append(moved)
            return out

        if self.exclude is not None:
            settings.exclude = rebased(self.exclude, "--exclude")
        settings.extend_exclude = [*settings.extend_exclude, *rebased(self.extend_exclude, "--extend-exclude")]
        if self.per_file_ignores is not None:
            settings.per_file_ignores, settings.ignore_bases = {}, {}
        for flag, pairs in (("--per-file-ignores", self.per_file_ignores or ()),
                            ("--extend-per-file-ignores", self.extend_per_file_ignores)):
            for pattern, codes in pairs:
                expanded = frozenset(c for code in codes for c in expand_selector(code, "command line", flag))
                for moved in rebased([pattern], flag):
                    settings.ignore_bases.pop(moved, None)  # now relative to the root, as rebased
                    settings.per_file_ignores[moved] = settings.per_file_ignores.get(moved, frozenset()) | expanded


def build_settings(
    config_path: Path | None,
    cli: dict[str, list[str] | None] | None = None,
    *,
    force_exclude: bool = False,
    root: Path | None = None,
    overrides: Overrides | None = None,
) -> Settings:
    """Resolve settings from the config file (if any, with the files it ``extend``s) and
    the CLI selection flags. A file's keys override those it inherits; selections apply in
    order (the inherited file's, then this file's, then the command line's)."""
    chain = read_chain(config_path) if config_path else []
    layers = [(str(path), _selection_layer(table, str(path))) for path, table in chain]
    if cli:
        layers.append(("command line", cli))
    settings = Settings(enabled=resolve_selection(layers), rule_options={}, force_exclude=force_exclude)
    settings.config_path = config_path
    settings.root = (root or (config_path.parent if config_path else Path.cwd())).resolve()
    settings.extends = [path for path, _ in reversed(chain[:-1])]
    for path, table in chain:
        _apply_table(settings, table, path)
    if overrides:
        overrides.apply(settings)
    return settings


def _selection_layer(table: dict[str, Any], source: str) -> dict[str, list[str] | None]:
    """The table's keys checked, and its select/extend-select/ignore as one selection layer."""
    rules_by_name = {r.name: r for r in rule_index()}
    rules_by_code = {r.code: r for r in rule_index()}
    for key in table:
        if key.upper() in rules_by_code and isinstance(table[key], dict):
            raise ConfigError(source, key, f"name the table after the rule: {rules_by_code[key.upper()].name}")
        if key not in TOP_LEVEL_KEYS and key not in rules_by_name:
            accepted = ", ".join(list(TOP_LEVEL_KEYS) + sorted(rules_by_name))
            raise ConfigError(source, key, "unknown key" + did_you_mean(key, [*TOP_LEVEL_KEYS, *rules_by_name]),
                              accepted)
    layer: dict[str, list[str] | None] = {}
    for key in ("select", "extend-select", "ignore"):
        if key in table:
            layer[key] = _str_list(table[key], source, key)
    if "extend-ignore" in table:
        layer["ignore"] = [*(layer.get("ignore") or ()), *_str_list(table["extend-ignore"], source, "extend-ignore")]
    return layer


def _apply_table(settings: Settings, table: dict[str, Any], path: Path) -> None:
    """Every non-selection key of one configuration file onto ``settings`` (paths in it are
    relative to the file's directory)."""
    source = str(path)
    here = path.parent.resolve()
    if "exclude" in table:
        settings.exclude = _patterns(table["exclude"], source, "exclude")
    if "extend-exclude" in table:
        settings.extend_exclude = _patterns(table["extend-exclude"], source, "extend-exclude")
    if "extend-include" in table:
        settings.extend_include = _patterns(table["extend-include"], source, "extend-include")
    if "respect-gitignore" in table:
        if not isinstance(table["respect-gitignore"], bool):
            raise ConfigError(source, "respect-gitignore", f"expected true or false, got {table['respect-gitignore']!r}")
        settings.respect_gitignore = table["respect-gitignore"]
    if "per-file-ignores" in table:  # replaces the inherited table, as in ruff
        settings.per_file_ignores, settings.ignore_bases = {}, {}
    for table_key in ("per-file-ignores", "extend-per-file-ignores"):
        if table_key in table:
            added = _add_per_file_ignores(settings.per_file_ignores, table[table_key], source, table_key)
            if here != settings.root:
                settings.ignore_bases.update({pattern: here for pattern in added})
    if "cache-dir" in table:
        if not isinstance(table["cache-dir"], str):
            raise ConfigError(source, "cache-dir", f"expected a path string, got {table['cache-dir']!r}")
        settings.cache_dir = here / table["cache-dir"]
    if "max-file-size" in table:
        settings.max_file_size = parse_size(table["max-file-size"], source, "max-file-size")
    if "trace" in table:
        if not isinstance(table["trace"], dict):
            raise ConfigError(source, "trace", "must be a table")
        from torchlint.trace_settings import load as validate_trace

        validate_trace(table["trace"], source)  # no torch needed
        settings.trace = table["trace"]
    for rule in rule_index():
        if rule.name in table:
            inherited = settings.rule_options.get(rule.code)
            settings.rule_options[rule.code] = _rule_options(rule, table[rule.name], source, inherited)
    for key, attr in (("fix", "fix"), ("unsafe-fixes", "unsafe_fixes")):
        if key in table:
            if not isinstance(table[key], bool):
                raise ConfigError(source, key, f"expected true or false, got {table[key]!r}")
            setattr(settings, attr, table[key])
    for key in ("fixable", "unfixable"):
        if key in table:
            codes = frozenset(c for s in _str_list(table[key], source, key) for c in expand_selector(s, source, key))
            setattr(settings, key, codes)
    if "target-version" in table:
        target = _target_version(table["target-version"], source)
        from torchlint.codes import SYNTAX_ERROR  # target-version decides its findings

        settings.rule_options.setdefault(SYNTAX_ERROR, {})["target-version"] = target


class Configs:
    """Each file's settings, as ruff resolves them: those of the nearest configuration file
    in the file's directory or above it, up to the project root (``base.root``), else
    ``base``'s. ``fixed`` (``--config``, ``--isolated``): ``base`` for every file."""

    def __init__(self, base: Settings, cli: dict[str, list[str] | None] | None = None, *, fixed: bool = False,
                 overrides: Overrides | None = None):
        self.base = base
        self.cli = cli
        self.overrides = overrides
        self.fixed = fixed
        self._by_config: dict[Path, Settings] = {}
        if base.config_path is not None:
            self._by_config[Path(os.path.realpath(base.config_path))] = base
        self._by_directory: dict[Path, Settings] = {}
        self._real: dict[Path, Path] = {}  # a directory as written -> as resolved (one realpath each)
        self._root = Path(os.path.realpath(base.root))

    def for_path(self, path: Path) -> Settings:
        """The settings of the file at ``path``: the nearest configuration above the directory
        it is in (a linked file's, not its target's, as for the project root)."""
        if self.fixed:
            return self.base
        parent = path.parent
        real = self._real.get(parent)
        if real is None:
            real = self._real[parent] = Path(os.path.realpath(parent))
        return self._for_directory(real)

    def _for_directory(self, directory: Path) -> Settings:
        found = self._by_directory.get(directory)
        if found is not None:
            return found
        root = self._root
        if directory != root and root not in directory.parents:
            found = self.base  # outside the project
        else:
            config = config_in(directory)
            if config is not None:
                found = self._settings(config)
            else:
                found = self.base if directory == root else self._for_directory(directory.parent)
        self._by_directory[directory] = found
        return found

    def _settings(self, config: Path) -> Settings:
        key = Path(os.path.realpath(config))
        if key not in self._by_config:
            self._by_config[key] = build_settings(config, self.cli, force_exclude=self.base.force_exclude,
                                                  overrides=self.overrides)
        return self._by_config[key]


def discover_configs(start: Path, cli: dict[str, list[str] | None] | None = None, *,
                     force_exclude: bool = False, overrides: Overrides | None = None) -> Configs:
    """The settings of files under ``start`` (a directory), found as ``torchlint check``
    finds them: the outermost configuration file from ``start`` up to its git repository's
    top is the base, and each file's nearest one below it its own (``Configs``)."""
    from torchlint.gitignore import git_root

    stop = git_root(start)
    config_path = outermost_config(start, stop)
    root = None if config_path else (stop or start)
    return Configs(build_settings(config_path, cli, force_exclude=force_exclude, root=root, overrides=overrides), cli,
                   overrides=overrides)
