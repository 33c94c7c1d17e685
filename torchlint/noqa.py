"""Suppression comments, lexed as ruff lexes them.

* ``# noqa`` or ``# noqa: TL001, TL002`` (codes or rule names: ``# noqa: missing-zero-grad``)
  at the end of the line a finding is reported on; on a line that cannot hold a comment (it
  ends inside a multi-line string or with a backslash) the comment goes where that string or
  continuation ends, as ruff's noqa mapping does;
* ``# torchlint: noqa`` (optionally ``: TL001,TL003``) on a line of its own silences the
  whole file; put it near the top.

The directive's grammar is ruff's: ``# noqa`` followed by nothing or another ``#`` silences
every rule; ``:`` (spaces allowed before it: ``# noqa : TL002``) starts a list of codes
separated by commas or spaces, ended by the first word that is not a code (an explanation);
``# noqa TL002`` (no colon) silences every rule, as in ruff, and is reported (TL902); a
directive ruff rejects (``#noqaTL001``, ``# noqa:`` with no code, ``# noqa: TL001abc``)
silences nothing and is reported. Codes are case-insensitive; a kebab-case word counts as a
code only when it names a rule. Codes of other tools (``E501``, ``BLE001``) are kept and
never reported; a ``TL`` code that is no rule is reported (TL902, as ruff's RUF102).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterable, Iterator

from torchlint.textscan import contains_lowered

if TYPE_CHECKING:
    from torchlint.finding import Finding
    from torchlint.fixes import Fix
    from torchlint.project import FileRecord


@dataclass(frozen=True)
class Directive:
    """A line-level noqa comment: where it is, what it names (None: every rule), the lines
    it covers (its own and those mapped to it), and its line's text (what TL901's fix edits:
    ``unused_fix``)."""

    line: int
    column: int  # 1-based, of the directive's ``#``
    length: int  # characters from its ``#`` to the end of its last code
    codes: tuple[str, ...] | None  # upper-case codes as resolved (names turned into codes)
    covers: tuple[int, ...]
    text: str  # the line the directive is on, without its line break


@dataclass(frozen=True)
class Problem:
    """A malformed or unknown part of a noqa comment (reported as TL902)."""

    line: int
    column: int
    length: int
    message: str
    # ``# noqa: some words`` (free text, no code): flake8 reads it as a blanket noqa, so it is
    # another tool's directive unless a torchlint finding on its line is left unsilenced
    prose: bool = False


@dataclass
class Suppressions:
    # line -> codes (None: every code)
    lines: dict[int, frozenset[str] | None] = field(default_factory=dict)
    # whole file: False (no), None (every code) or codes
    file: frozenset[str] | None | bool = False
    # the line-level directives with codes (what TL901 judges) and what TL902 reports
    directives: list[Directive] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    def suppresses(self, rule: str, line: int) -> bool:
        return self.suppresses_file(rule) or self.suppresses_line(rule, line)

    def suppresses_file(self, rule: str) -> bool:
        return self.file is not False and (self.file is None or rule in self.file)

    def suppresses_line(self, rule: str, line: int, *, blanket: bool = True) -> bool:
        """Whether a line directive silences ``rule`` there; ``blanket=False`` counts only a
        directive that names the rule."""
        if line in self.lines:
            codes = self.lines[line]
            return (blanket and codes is None) or (codes is not None and rule in codes)
        return False

    def to_json(self) -> dict:
        return {
            "lines": {str(k): (sorted(v) if v is not None else None) for k, v in self.lines.items()},
            "file": self.file if self.file is False else (sorted(self.file) if self.file is not None else None),
            "directives": [[d.line, d.column, d.length, list(d.codes) if d.codes is not None else None, list(d.covers),
                            d.text] for d in self.directives],
            "problems": [[p.line, p.column, p.length, p.message, p.prose] for p in self.problems],
        }

    @classmethod
    def from_json(cls, data: dict) -> "Suppressions":
        lines = {int(k): (frozenset(v) if v is not None else None) for k, v in data["lines"].items()}
        f = data["file"]
        directives = [Directive(line, column, length, tuple(codes) if codes is not None else None, tuple(covers), text)
                      for line, column, length, codes, covers, text in data.get("directives", ())]
        problems = [Problem(*p) for p in data.get("problems", ())]
        return cls(lines, f if f is False else (frozenset(f) if f is not None else None), directives, problems)


# -- the directive's grammar (ruff's ``NoqaLexer``, with rule names accepted as codes) ----------

_START_NOQA = re.compile(r"#\s*(?P<file>torchlint\s*:\s*)?noqa", re.IGNORECASE)
_WS = re.compile(r"\s*")
_PROSE = re.compile(r"[A-Za-z]+(?:\s|$)")  # a plain word (not a code, not a kebab rule name): free text
_CODE = re.compile(r"(?:[A-Z]+|[Tt][Ll])[0-9]+")  # ruff's [A-Z]+[0-9]+; tl001 as before
_WORD = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)+")  # a kebab-case rule name
_TL_CODE = re.compile(r"TL[0-9]+")
_SNIPPET = 60


def _rule_names() -> tuple[dict[str, str], frozenset[str]]:
    """(rule name -> code, every rule code)."""
    from torchlint.rule import rule_index

    rules = rule_index()
    return {r.name: r.code for r in rules}, frozenset(r.code for r in rules)


def _shown(text: str) -> str:
    text = text.rstrip()
    return text if len(text) <= _SNIPPET else text[: _SNIPPET - 1] + "\u2026"


@dataclass
class Parsed:
    """One comment's directive: ``codes`` None means every rule; ``valid`` False means it
    silences nothing. ``end`` is the offset in the comment just past the last code (where
    ``--add-noqa`` appends), ``file`` whether it is a ``# torchlint: noqa``; ``words`` the
    codes as written (``missing-zero-grad``, ``tl001``), one for each of ``codes``."""

    start: int
    valid: bool
    codes: tuple[str, ...] | None
    end: int
    file: bool
    problems: list[tuple] = field(default_factory=list)  # (offset, length, message[, prose])
    words: list[str] = field(default_factory=list)


def parse_directive(comment: str) -> Parsed | None:
    """The noqa directive in one comment's text (from its ``#``), or None when it has none."""
    match = _START_NOQA.search(comment)
    if match is None:
        return None
    start, pos = match.start(), match.end()
    parsed = Parsed(start, True, None, pos, bool(match.group("file")))
    if pos == len(comment) or comment[pos] == "#":
        return parsed  # every rule
    if comment[pos] == ":":
        return _codes_after(comment, pos + 1, parsed)
    if comment[pos].isspace():
        after = _WS.match(comment, pos).end()
        if after < len(comment) and comment[after] == ":":
            return _codes_after(comment, after + 1, parsed)
        named = _named(comment, after)
        if named:
            end = after + len(named)
            parsed.problems.append((start, end - start, f"`{_shown(comment[start:end])}` has no colon, so it silences "
                                    f"every rule on this line, not only {named}: write `# noqa: {named}`"))
        return parsed  # every rule, as ruff reads ``# noqa followed by an explanation``
    parsed.valid = False
    head = "# torchlint: noqa" if parsed.file else "# noqa"
    parsed.problems.append((start, len(comment) - start,
                            f"`{_shown(comment[start:])}` is not a noqa directive, so it silences nothing: "
                            f"write `{head}` or `{head}: CODE`"))
    return parsed


def _named(comment: str, pos: int) -> str | None:
    """The code or rule name at ``pos``, if a whole word is one."""
    code = _CODE.match(comment, pos)
    if code and _word_ends(comment, code.end()):
        return code.group()
    word = _WORD.match(comment, pos)
    if word and word.group() in _rule_names()[0] and _word_ends(comment, word.end()):
        return word.group()
    return None


def _word_ends(text: str, pos: int) -> bool:
    return pos == len(text) or text[pos].isspace() or text[pos] in ",#"


def _codes_after(comment: str, pos: int, parsed: Parsed) -> Parsed:
    """Lex the codes after ``noqa:``: separated by commas or spaces (``TL001TL002`` is two, as
    in ruff); the first word that is neither a code nor a rule name ends the list (the rest is
    an explanation), unless it follows a comma and looks like a rule name (a misspelt one)."""
    names, known = _rule_names()
    codes: list[str] = []
    after_comma = joined = False
    start = parsed.start
    while True:
        pos = _WS.match(comment, pos).end()
        if pos == len(comment) or comment[pos] == "#":
            break
        if comment[pos] == ",":
            pos, after_comma = pos + 1, True
            continue
        word = _WORD.match(comment, pos)
        if word and word.group() in names and _word_ends(comment, word.end()):
            codes.append(names[word.group()])
            parsed.words.append(word.group())
            pos = parsed.end = word.end()
            after_comma = joined = False
            continue
        code = _CODE.match(comment, pos)
        if code and (_word_ends(comment, code.end()) or comment[code.end()].isalpha()):
            text = code.group().upper()
            if _TL_CODE.fullmatch(text) and text not in known:
                parsed.problems.append((start, code.end() - start, f"`{_shown(comment[start:code.end()])}` names "
                                        f"{text}, which is not a torchlint rule: correct it or remove it "
                                        "(see `torchlint rules`)"))
            codes.append(text)
            parsed.words.append(code.group())
            pos = parsed.end = code.end()
            after_comma, joined = False, not _word_ends(comment, pos)
            continue
        if joined or code:  # `TL001abc`, `TL001;`: ruff's "invalid code suffix"
            parsed.valid = False
            parsed.problems.append((start, len(comment) - start, f"`{_shown(comment[start:])}` is not a list of "
                                    "rule codes, so it silences nothing: separate codes with commas or spaces"))
            return parsed
        if after_comma and word:
            parsed.problems.append((start, word.end() - start, f"`{_shown(comment[start:word.end()])}` names "
                                    f"{word.group()}, which is not a torchlint rule: correct it or remove it "
                                    "(see `torchlint rules`)"))
        break
    number = _BARE_NUMBER.match(comment, pos) if not codes else None
    if number:  # ``# noqa: 401``: a flake8 code without its letter
        parsed.valid = False
        digits = number.group(1)
        guess = ("F" if digits[0] in "48" else "E") + digits  # pyflakes' F401, F811, F841; pycodestyle's E501
        parsed.problems.append((start, len(comment) - start, f"`{_shown(comment[start:])}` names no rule code, so it "
                                f"silences nothing here (ruff rejects it too), while flake8 reads a bare number as a "
                                f"blanket `# noqa`; write the code with its letter (`# noqa: {guess}`)"))
        return parsed
    if not codes:
        parsed.valid = False
        parsed.problems.append((start, len(comment) - start, f"`{_shown(comment[start:])}` names no rule code, so it "
                                "silences nothing: write `# noqa: TL001` or a rule name (`# noqa: missing-zero-grad`)",
                                bool(_PROSE.match(comment, pos))))
        return parsed
    parsed.codes = tuple(codes)
    return parsed


# ``401`` after ``noqa:``: a code without its letter (``F401``).
_BARE_NUMBER = re.compile(r"(\d{3,4})\b")


# A small lexer that tells comments from string literals, which is all suppression needs.
# String prefixes (r, b, f, ...) need no matching: they are identifier characters before the
# quote. Every pattern is linear: an unterminated one-line string ends at its line's end and an
# unterminated triple-quoted string at the end of the text, as the tokenizer reports them.
_START = re.compile("#|'''|\"\"\"|'|\"")
_REST = {  # the rest of a literal after its opening quote(s), closing quote(s) included if there
    "'''": re.compile(r"[^\\']*(?:(?:\\.|'(?!''))[^\\']*)*(?:''')?", re.DOTALL),
    '"""': re.compile(r'[^\\"]*(?:(?:\\.|"(?!""))[^\\"]*)*(?:""")?', re.DOTALL),
    "'": re.compile(r"[^\\'\r\n]*(?:\\(?:\r\n|.)[^\\'\r\n]*)*'?", re.DOTALL),
    '"': re.compile(r'[^\\"\r\n]*(?:\\(?:\r\n|.)[^\\"\r\n]*)*"?', re.DOTALL),
}
_COMMENT = re.compile(r"[^\r\n]*")
_NOQA = re.compile("noqa", re.IGNORECASE)


def _line_breaks(text: str, start: int, end: int) -> int:
    """Line breaks in ``text[start:end]``, counted as the parser counts them (``\\r\\n``, ``\\r``
    or ``\\n``; not form feeds, U+2028 or the other breaks ``str.splitlines`` knows)."""
    return text.count("\n", start, end) + text.count("\r", start, end) - text.count("\r\n", start, end)


def _literals(text: str) -> Iterator[tuple[str, int, int]]:
    """(opener, start, end) of every comment (opener ``#``) and string literal, in order.

    Not ``tokenize``: this must never raise (the file may not even be Python) and is tens of
    times faster.
    """
    pos = 0
    while True:
        start = _START.search(text, pos)
        if start is None:
            return
        opener = start.group()
        pos = (_COMMENT if opener == "#" else _REST[opener]).match(text, start.end()).end()
        yield opener, start.start(), pos


def _line_start(text: str, offset: int) -> int:
    return max(text.rfind("\n", 0, offset), text.rfind("\r", 0, offset)) + 1


def _numbered_comments(text: str) -> Iterator[tuple[int, int, int]]:
    """(line, start, end) of every real comment of ``text`` (a ``#`` inside a string or
    docstring is none), lines counted as the parser counts them."""
    line, counted = 1, 0
    for opener, start, end in _literals(text):
        if opener != "#":
            continue
        line += _line_breaks(text, counted, start)
        counted = start
        yield line, start, end


def comments_by_line(text: str) -> dict[int, str]:
    """Line -> the comment on it (``#`` to the end of the line, as ``tokenize`` gives it), for
    every real comment of ``text``. Never raises."""
    return {line: text[start:end] for line, start, end in _numbered_comments(text)}


def _comment_sites(text: str) -> Iterator[tuple[int, int, str, str]]:
    """(line, 1-based column, its line's text before it, text) of every comment that mentions
    noqa (a comment runs to the end of its line)."""
    for line, start, end in _numbered_comments(text):
        if not _NOQA.search(text, start, end):
            continue
        line_start = _line_start(text, start)
        yield line, start - line_start + 1, text[line_start:start], text[start:end]


def _comments(text: str) -> Iterator[tuple[int, bool, str]]:
    """(line, stands alone on its line, text) of every comment that mentions noqa."""
    for line, _, before, comment in _comment_sites(text):
        yield line, not before.strip(), comment


_CONTINUED = re.compile(r"\\(?:\r\n|\r|\n)")


def comment_lines(text: str) -> dict[int, int]:
    """Lines that cannot end with a comment (they end inside a multi-line string, or with a
    backslash continuation) -> the line whose end can: where that string or continuation
    ends (ruff's noqa mapping). Other lines are their own."""
    following: dict[int, int] = {}
    line, counted, code_from = 1, 0, 0

    def line_at(offset: int) -> int:
        nonlocal line, counted
        line += _line_breaks(text, counted, offset)
        counted = offset
        return line

    def continuations(start: int, end: int) -> None:
        for match in _CONTINUED.finditer(text, start, end):
            first = line_at(match.start())
            following[first] = first + 1

    for opener, start, end in _literals(text):
        continuations(code_from, start)
        code_from = end
        if opener == "#":
            continue
        first = line_at(start)
        last = first + _line_breaks(text, start, end)
        for n in range(first, last):
            following[n] = last
    continuations(code_from, len(text))
    resolved: dict[int, int] = {}
    for n in sorted(following, reverse=True):  # a line maps to a later one: resolve from the end
        resolved[n] = resolved.get(following[n], following[n])
    return resolved


def scan(text: str) -> Suppressions:
    """The suppression comments of a file's text. Only real comments count: ``# noqa`` inside
    a string or docstring suppresses nothing."""
    sup = Suppressions()
    if not contains_lowered(text, "noqa"):  # most files: a few milliseconds per megabyte, nothing else
        return sup
    mapped: dict[int, list[int]] | None = None
    for number, column, before, comment in _comment_sites(text):
        parsed = parse_directive(comment)
        if parsed is None:
            continue
        sup.problems.extend(Problem(number, column + offset, *problem) for offset, *problem in parsed.problems)
        if not parsed.valid:
            continue
        codes = frozenset(parsed.codes) if parsed.codes is not None else None
        if parsed.file and not before.strip() and parsed.start == 0:
            if codes is None or sup.file is None:
                sup.file = None
            else:
                sup.file = codes | (sup.file if isinstance(sup.file, frozenset) else frozenset())
            continue
        if mapped is None:
            mapped = _covered_by(text)
        covers = tuple(sorted((number, *mapped.get(number, ()))))
        for line in covers:
            sup.lines[line] = codes
        if parsed.codes is not None:
            sup.directives.append(Directive(number, column + parsed.start, parsed.end - parsed.start, parsed.codes, covers,
                                            before + comment))
    return sup


def _covered_by(text: str) -> dict[int, list[int]]:
    """Comment line -> the lines that cannot hold a comment and map to it."""
    covered: dict[int, list[int]] = {}
    for line, target in sorted(comment_lines(text).items()):
        covered.setdefault(target, []).append(line)
    return covered



# -- TL901 unused-noqa and TL902 invalid-noqa: judged once every finding is known -------------

def noqa_rule_codes() -> tuple[str, str]:
    """The codes of the rules about noqa comments themselves (unused, invalid)."""
    from torchlint import codes

    return codes.UNUSED_NOQA, codes.INVALID_NOQA


def noqa_findings(records: Iterable["FileRecord"], reported: Iterable["Finding"], enabled: frozenset[str]) -> list["Finding"]:
    """TL902 for every malformed or unknown part of a noqa comment; TL901 for every directive
    whose torchlint codes silence nothing. ``reported``: the run's findings of enabled rules
    that per-file-ignores and file-level noqa left (what line directives may silence)."""
    from torchlint.finding import Finding, Span
    from torchlint.rule import rule_index

    rules = {r.code: r for r in rule_index()}
    UNUSED_NOQA, INVALID_NOQA = noqa_rule_codes()
    out: list[Finding] = []
    lines: dict[str, set[int]] = {}
    for f in reported:
        lines.setdefault(f.path, set()).add(f.line)
    if INVALID_NOQA in enabled:
        rule = rules[INVALID_NOQA]
        for record in records:
            for p in record.suppressions.problems:
                if p.prose and p.line not in lines.get(record.path, ()):
                    continue  # free text after ``noqa:`` on a line torchlint has nothing on: another tool's
                out.append(Finding.at(rule, record.path, Span(p.line, p.column, p.line, p.column + p.length), p.message))
    if UNUSED_NOQA in enabled:
        rule = rules[UNUSED_NOQA]
        judged = {c for c, r in rules.items() if not r.traced and c not in (UNUSED_NOQA, INVALID_NOQA)}
        seen: dict[str, set[tuple[str, int]]] = {}
        for f in reported:
            seen.setdefault(f.path, set()).add((f.rule, f.line))
        for record in records:
            found = seen.get(record.path, set())
            for d in record.suppressions.directives:
                unused = [c for c in dict.fromkeys(d.codes or ()) if c in judged
                          and not any((c, line) in found for line in d.covers)]
                if unused:
                    out.append(Finding.at(rule, record.path, Span(d.line, d.column, d.line, d.column + d.length),
                                          unused_message(unused), fix=unused_fix(d, unused)))
    return out


def unused_message(codes: list[str]) -> str:
    if len(codes) == 1:
        return (f"noqa code {codes[0]} silences nothing on this line: remove it, so that it cannot hide a "
                "finding this line gets later")
    return (f"noqa codes {', '.join(codes)} silence nothing on this line: remove them, so that they cannot hide "
            "a finding this line gets later")


def unused_fix(directive: Directive, unused: list[str]) -> "Fix":
    """TL901's fix (safe: a comment changes nothing the program computes), as ruff's RUF100:
    the directive rewritten as ``# noqa: `` and the codes it keeps, as written; or, when it
    keeps none, the directive removed with the spaces around it, the comments beside it kept
    (``x = 1  # noqa: TL001  # why`` -> ``x = 1  # why``; an explanation after the codes stays
    a comment: ``# noqa: TL001 flaky`` -> ``# flaky``), its line too when nothing else is on it."""
    from torchlint.finding import Span
    from torchlint.fixes import Edit, Fix

    line, start = directive.line, directive.column - 1
    end = start + directive.length
    words = parse_directive(directive.text[start:]).words  # the codes as written, names included
    kept = [word for word, code in zip(words, directive.codes or ()) if code not in unused]
    if kept:
        title = f"Remove unused noqa code{'s' if len(unused) > 1 else ''} {', '.join(unused)}"
        return Fix.safe(title, Edit(Span(line, start + 1, line, end + 1), "# noqa: " + ", ".join(kept)))
    text = directive.text
    head, tail = text[:start].rstrip(), text[end:].lstrip()
    if not head and not tail:  # the comment is the whole line: remove the line
        edit = Edit(Span(line, 1, line + 1, 1), "")
    elif not tail:
        edit = Edit(Span(line, len(head) + 1, line, len(text) + 1), "")
    else:  # another comment (``# why``) or the explanation after the codes (made a comment) stays
        edit = Edit(Span(line, start + 1, line, len(text) - len(tail) + 1), "" if tail.startswith("#") else "# ")
    return Fix.safe("Remove unused noqa directive", edit)


# -- --add-noqa -----------------------------------------------------------------------------------

_BREAK = re.compile(r"(\r\n|\r|\n)")


def add_noqa(text: str, wanted: dict[int, set[str]]) -> tuple[str, int, list[int]]:
    """``text`` with noqa comments for ``wanted`` (finding line -> codes): each line that can
    hold the comment is edited once, its line break kept. An existing ``# noqa: ...`` gets the
    missing codes appended after its last code; a blanket ``# noqa`` already silences them.
    Returns the new text, the number of lines edited, and the lines left alone because their
    noqa comment is malformed (a new comment after it would not be read)."""
    targets = comment_lines(text)
    by_line: dict[int, set[str]] = {}
    for line, codes in wanted.items():
        by_line.setdefault(targets.get(line, line), set()).update(codes)
    sites = {line: (column, comment) for line, column, _, comment in _comment_sites(text)}
    parts = _BREAK.split(text)  # line 1, its break, line 2, ...
    edited, malformed = 0, []
    for line, codes in sorted(by_line.items()):
        index = 2 * (line - 1)
        if line < 1 or index >= len(parts):
            continue
        content = parts[index]
        directive = parse_directive(sites[line][1]) if line in sites else None
        if directive is None:
            parts[index] = content.rstrip(" \t") + "  # noqa: " + ", ".join(sorted(codes))
        elif not directive.valid:
            malformed.append(line)
            continue
        elif directive.codes is None or not (missing := sorted(codes - set(directive.codes))):
            continue
        else:
            at = sites[line][0] - 1 + directive.end
            parts[index] = content[:at] + ", " + ", ".join(missing) + content[at:]
        edited += 1
    return "".join(parts), edited, malformed
