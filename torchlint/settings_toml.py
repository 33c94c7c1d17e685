"""``torchlint check --show-settings FILE``: the settings FILE is linted with, as TOML that can
be pasted back into a ``[tool.torchlint]`` table (or a ``torchlint.toml``) and gives the same
settings again.

Every setting is written, resolved: ``select`` and ``ignore`` as codes (what is enabled, and
every other rule), the ``per-file-ignores`` entries that match FILE, ``fix``,
``unsafe-fixes``, ``fixable``/``unfixable`` as codes, ``exclude``/``extend-exclude``/
``extend-include``, ``respect-gitignore``, ``target-version``, ``max-file-size`` in bytes,
``cache-dir``, ``trace`` and each rule's options (``rule-name.option = value``). Where the
settings come from (the file, its configuration file, the files that one extends, the
project root) is written as comments.
"""

from __future__ import annotations

import math
import os
import re
from pathlib import Path
from typing import Any

from torchlint.codes import SYNTAX_ERROR
from torchlint.finding import escape_path, escape_text
from torchlint.rule import rule_index

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+\Z")
_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}
DEFAULT_TARGET_VERSION = "py314"  # the newest grammar LibCST reads (syntax.NEWEST), the default


def toml_string(text: str) -> str:
    """``text`` as a TOML basic string (control characters escaped; a lone surrogate, which
    TOML cannot hold, as the ``\\xNN``/``\\uNNNN`` text ``escape_text`` shows it)."""
    out = []
    for char in text:
        point = ord(char)
        if char in _ESCAPES:
            out.append(_ESCAPES[char])
        elif point < 0x20 or point == 0x7F:
            out.append(f"\\u{point:04X}")
        elif 0xD800 <= point <= 0xDFFF:
            out.append(escape_text(char).replace("\\", "\\\\"))
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def toml_key(key: str) -> str:
    return key if _BARE_KEY.match(key) else toml_string(key)


def toml_value(value: Any) -> str:
    """A TOML value, on one line (tables inline)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return toml_string(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        if not value:
            return "{}"
        return "{ " + ", ".join(f"{toml_key(str(k))} = {toml_value(v)}" for k, v in value.items()) + " }"
    raise TypeError(f"no TOML value for {value!r}")


def _comment(text: str) -> str:
    return "# " + escape_text(text)


def _under(path: Path, root: Path) -> str | None:
    """``path`` relative to ``root`` (posix), or None outside it."""
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return None


def matching_ignores(settings, path: Path) -> list[tuple[str, frozenset[str], str | None]]:
    """The ``per-file-ignores`` entries that match the file at ``path`` (absolute): (the
    pattern as it can be written in the file's configuration, its codes, the pattern as the
    configuration that wrote it has it when that is another file's, relative to that file's
    directory)."""
    from torchlint.gitignore import Spec

    real = Path(os.path.realpath(path))
    root = Path(os.path.realpath(settings.root))
    found = []
    for pattern, codes in settings.per_file_ignores.items():
        base = Path(os.path.realpath(settings.ignore_bases.get(pattern, settings.root)))
        rel = _under(real, base)
        if rel is None or not Spec.from_lines([pattern]).match_file(rel):
            continue
        if base == root:
            found.append((pattern, codes, None))
        else:  # relative to another directory: the file itself, from this root
            own = _under(real, root)
            found.append(("/" + own if own is not None else real.as_posix(), codes, f"{pattern} (relative to {base})"))
    return sorted(found, key=lambda entry: entry[0])


def render(configs, path: Path, cwd: Path, *, source: str | None = None, cache_dir: str | None = None) -> str:
    """The TOML of the settings of the file at ``path`` (as given, relative to ``cwd``).
    ``source`` names where the configuration came from when no file was searched for
    (``--config``, ``--isolated``); ``cache_dir``, ``--cache-dir``."""
    absolute = cwd / path
    settings = configs.for_path(absolute)
    rules = list(rule_index())
    codes = [r.code for r in rules]
    lines = [_comment(f"torchlint settings for {escape_path(str(path))}; paste into [tool.torchlint] "
                      "(or a torchlint.toml)"),
             _comment(f"file: {escape_path(str(path))}")]
    if settings.config_path is not None:
        lines.append(_comment(f"configuration: {escape_path(str(settings.config_path))}"
                              + (f" ({source})" if source else "")))
    else:
        lines.append(_comment(f"configuration: none, the defaults{f' ({source})' if source else ''}"))
    lines += [_comment(f"  extends: {escape_path(str(p))}") for p in settings.extends]
    lines.append(_comment(f"project root: {escape_path(str(configs.base.root))}"))
    lines.append(_comment(f"enabled: {len(settings.enabled)} of {len(codes)} rules"))
    lines.append(f"select = {toml_value([c for c in codes if c in settings.enabled])}")
    lines.append(f"ignore = {toml_value([c for c in codes if c not in settings.enabled])}")
    lines.append(f"exclude = {toml_value(list(settings.exclude))}")
    lines.append(f"extend-exclude = {toml_value(list(settings.extend_exclude))}")
    lines.append(f"extend-include = {toml_value(list(settings.extend_include))}")
    lines.append(f"respect-gitignore = {toml_value(settings.respect_gitignore)}")
    ignores = matching_ignores(settings, absolute)
    if not ignores:
        lines.append(_comment("per-file-ignores: none matches this file"))
        lines.append("per-file-ignores = {}")
    for pattern, matched, original in ignores:
        if original is not None:
            lines.append(_comment(f"from per-file-ignores {original}"))
        lines.append(f"per-file-ignores.{toml_string(pattern)} = {toml_value([c for c in codes if c in matched])}")
    lines.append(f"fix = {toml_value(settings.fix)}")
    lines.append(f"unsafe-fixes = {toml_value(settings.unsafe_fixes)}")
    lines.append(f"fixable = {toml_value([c for c in codes if c in settings.fixable])}")
    lines.append(f"unfixable = {toml_value([c for c in codes if c in settings.unfixable])}")
    target = (settings.rule_options.get(SYNTAX_ERROR) or {}).get("target-version", DEFAULT_TARGET_VERSION)
    lines.append(f"target-version = {toml_value(target)}")
    lines.append(f"max-file-size = {settings.max_file_size}")
    lines.append(f"cache-dir = {toml_value(_cache_dir(settings, cwd, cache_dir))}")
    lines.append(f"trace = {toml_value(settings.trace or {})}")
    for rule in rules:
        if not rule.options:
            continue
        lines.append(_comment(f"{rule.code} {rule.name}" + ("" if rule.code in settings.enabled else " (not enabled)")))
        for key, value in settings.options_for(rule).items():
            lines.append(f"{toml_key(rule.name)}.{toml_key(key)} = {toml_value(value)}")
    return "\n".join(lines) + "\n"


def _cache_dir(settings, cwd: Path, given: str | None) -> str:
    """The cache directory, relative to the configuration's directory where it is inside it."""
    root = Path(os.path.realpath(settings.root))
    if given is not None:
        directory = Path(os.path.realpath(cwd / given))
    else:
        directory = Path(os.path.realpath(settings.cache_dir or root / ".torchlint_cache"))
    return _under(directory, root) or directory.as_posix()
