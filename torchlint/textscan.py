"""Whether a file's text holds a marker: ``contains(text, marker)`` is exactly ``marker in
text``, for the textual pre-checks of the rules (``Rule.might_apply``) and the analyses'
own tests of a file's text. Imports nothing of torchlint's.

Those ask ~100 markers of every file, and most markers are absent, so each is a scan of
the whole text (a billion instructions on torchvision+skorch+accelerate, ~1.5% of a run).
``contains`` scans less, with the same answers:

* each answer is kept for the text last asked about (the text itself, by identity), and
  several rules ask the same marker (``backward``: five of them);
* a marker's longest run of letters, digits and ``_`` lower-cased (its word, three
  characters or more: ``softmax`` of ``Softmax``, ``args`` of ``ARGS[``) is looked for once
  in the lower-cased text (of an ASCII text: lower-casing others costs more than it saves): where it is absent, so is every marker with that word
  (``softmax`` and ``Softmax``; ``args.``, ``args[``, ``ARGS.``, ``ARGS[``), and so is every
  longer word holding it (``arg`` absent: ``args``, ``parsed_args``), without a scan.

Sound because lower-casing maps each character on its own (Greek capital sigma aside, which
never lower-cases to ASCII): wherever a marker is in the text, its lower-cased form is in
the lower-cased text at the same place, and its word with it. A word found there says
nothing, and the marker is then looked for in the text itself.
"""

from __future__ import annotations

import re

_WORD_CHARS = re.compile("[a-z0-9_]+")
_SHORTEST_WORD = 3  # shorter words are in nearly every file: looking for them costs a scan for nothing
_WORDS: dict[str, str | None] = {}  # marker -> its word (None: none worth a scan)
_INSIDE: dict[str, list[str]] = {}  # every word asked about in this process -> the other such words it holds


class _Answers:
    """What ``contains`` knows of one text."""

    __slots__ = ("text", "ascii", "lower", "markers", "words")

    def __init__(self, text: str):
        self.text = text
        # Lower-casing other text costs a dozen scans of it: its markers are looked for alone.
        self.ascii = text.isascii()
        self.lower: str | None = None
        self.markers: dict[str, bool] = {}
        self.words: dict[str, bool] = {}


# The answers for the text last asked about (replaced whole, so a thread asking about
# another text never reads answers that are not its text's).
_LAST = [_Answers("")]


def contains(text: str, marker: str) -> bool:
    """``marker in text``, answered with fewer scans of ``text`` (see the module's docstring)."""
    answers = _LAST[0]
    if answers.text is not text:
        answers = _LAST[0] = _Answers(text)
    found = answers.markers.get(marker)
    return found if found is not None else _look(answers, marker)


def contains_any(text: str, markers: tuple[str, ...]) -> bool:
    """``any(marker in text for marker in markers)``, answered as ``contains`` answers."""
    answers = _LAST[0]
    if answers.text is not text:
        answers = _LAST[0] = _Answers(text)
    known = answers.markers
    for marker in markers:
        found = known.get(marker)
        if found is None:
            found = _look(answers, marker)
        if found:
            return True
    return False


def _look(answers: _Answers, marker: str) -> bool:
    """``marker in text`` not answered yet for ``answers``' text."""
    word = _WORDS.get(marker, "")
    if word == "":
        word = _WORDS[marker] = _word_of(marker)
    if word is not None and answers.ascii and not _word_in(answers, word):
        found = False
    else:
        found = marker in answers.text
    answers.markers[marker] = found
    return found


def contains_lowered(text: str, word: str) -> bool:
    """``word in text.lower()``, answered as ``contains`` answers (the same answers kept)."""
    answers = _LAST[0]
    if answers.text is not text:
        answers = _LAST[0] = _Answers(text)
    return _word_in(answers, word)


def _word_in(answers: _Answers, word: str) -> bool:
    """Whether ``word`` is in the lower-cased text."""
    words = answers.words
    found = words.get(word)
    if found is None:
        inside = _INSIDE.get(word)
        if inside is None:
            inside = _inside(word)
        for shorter in inside:
            if words.get(shorter) is False:
                found = False
                break
        else:
            lower = answers.lower
            if lower is None:
                lower = answers.lower = answers.text.lower()
            found = word in lower
        words[word] = found
    return found


def _inside(word: str) -> list[str]:
    """The other known words ``word`` holds (``arg`` in ``args``), ``word`` known from now
    on: added to the lists of the known words holding it."""
    pairs = tuple(_INSIDE.items())  # (taken at once: another thread may add a word meanwhile)
    found = [known for known, _ in pairs if known in word]
    for known, inside in pairs:
        if word in known:
            inside.append(word)
    _INSIDE[word] = found
    return found


def _word_of(marker: str) -> str | None:
    """The longest run of ``[a-z0-9_]`` in the lower-cased ``marker`` (the first of the
    longest), where it has ``_SHORTEST_WORD`` characters or more; None otherwise, and for a
    marker that is not ASCII."""
    if not marker.isascii():
        return None
    runs = _WORD_CHARS.findall(marker.lower())
    word = max(runs, key=len) if runs else None
    return word if word is not None and len(word) >= _SHORTEST_WORD else None
