"""Whether a file's text holds a marker: ``contains(text, marker)`` is exactly ``marker in
text``, for the textual pre-checks of the rules (``Rule.might_apply``) and the analyses'
own tests of a file's text. Imports nothing of torchlint's.

Those ask ~140 markers of every file, and most markers are absent, so each was a scan of
the whole text (0.25 s on torchvision+skorch+accelerate, replaying a run's questions).
``contains`` scans less, with the same answers (0.15 s):

* each answer is kept for the text last asked about (the text itself, by identity), and
  several rules ask the same marker (``backward``: five of them);
* the text's words (``_words``: its runs of ASCII letters, digits and ``_`` and of other
  characters than ASCII, each once) are a fifth of it or less, and hold a marker made of
  those characters wherever the text does; a marker with other characters is in the text
  only if its runs are in the words, bounded by a space where the marker bounds them
  (``_pieces_of``: ``args[`` needs a word ending in ``args``), and is looked for in the text
  only then;
* a marker's longest run of letters, digits and ``_`` lower-cased (its word, three
  characters or more: ``softmax`` of ``Softmax``, ``args`` of ``ARGS[``) is looked for once
  in the lower-cased words (of an ASCII text, whose words lower-cased are the lower-cased
  text's; other text is lower-cased whole): where it is absent, so is every marker with
  that word (``softmax`` and ``Softmax``; ``args.``, ``args[``, ``ARGS.``, ``ARGS[``), and
  so is every longer word holding it (``arg`` absent: ``args``, ``parsed_args``), without
  a look.

Sound because lower-casing maps each character on its own (Greek capital sigma aside, which
never lower-cases to ASCII): wherever a marker is in the text, its lower-cased form is in
the lower-cased text at the same place, and its word with it. A word found there says
nothing, and the marker is then looked for as above.
"""

from __future__ import annotations

import re

_PLAIN = re.compile("[A-Za-z0-9_]+")  # a run of ASCII letters, digits and ``_``
_SHORTEST_WORD = 3  # shorter words are in nearly every file: looking for them costs a scan for nothing
_WORDS: dict[str, str | None] = {}  # marker -> its word (None: none worth a scan)
_INSIDE: dict[str, list[str]] = {}  # every word asked about in this process -> the other such words it holds


class _Answers:
    """What ``contains`` knows of one text."""

    __slots__ = ("text", "ascii", "words", "lower", "markers", "lowered_words")

    def __init__(self, text: str):
        self.text = text
        # Lower-casing other text costs a dozen scans of it: its markers are looked for alone.
        self.ascii = text.isascii()
        self.words: str | None = None  # ``_words``, made on first use
        self.lower: str | None = None  # ASCII text: its words lower-cased; other: itself lower-cased
        self.markers: dict[str, bool] = {}  # marker -> whether the text holds it
        self.lowered_words: dict[str, bool] = {}  # word -> whether the lower-cased text holds it


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
        pieces = _pieces(marker)
        if pieces is _PLAIN_MARKER:
            found = marker in _words(answers)
        elif pieces and not all(piece in _words(answers) for piece in pieces):
            found = False
        else:
            found = marker in answers.text
    answers.markers[marker] = found
    return found


def contains_lowered(text: str, word: str) -> bool:
    """``word in text.lower()``, answered as ``contains`` answers (the same answers kept):
    from the lower-cased words where ``word`` is made of ASCII letters, digits and ``_``
    (as every caller's is), else from the lower-cased text."""
    answers = _LAST[0]
    if answers.text is not text:
        answers = _LAST[0] = _Answers(text)
    if answers.ascii and _pieces(word) is not _PLAIN_MARKER:
        return word in answers.text.lower()
    return _word_in(answers, word)


def is_lowered_word(text: str, word: str) -> bool:
    """False only where ``word`` (ASCII letters, digits and ``_``, lower-case) is none of the
    words of the lower-cased ``text`` (runs between other characters than ASCII letters,
    digits and ``_``): known for an ASCII text, whose lower-cased words say it; True for
    other text."""
    answers = _LAST[0]
    if answers.text is not text:
        answers = _LAST[0] = _Answers(text)
    return not answers.ascii or _word_in(answers, f" {word} ")


def _word_in(answers: _Answers, word: str) -> bool:
    """Whether ``word`` is in the lower-cased text."""
    words = answers.lowered_words
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
                # An ASCII text's words lower-cased are the lower-cased text's words.
                lower = answers.lower = _words(answers).lower() if answers.ascii else answers.text.lower()
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
    runs = _PLAIN.findall(marker.lower())
    word = max(runs, key=len) if runs else None
    return word if word is not None and len(word) >= _SHORTEST_WORD else None


# Every ASCII byte that is not a letter, a digit or ``_``, as a space (``bytes.translate``
# of the UTF-8 text: ten times faster than ``str.translate``).
_SEPARATORS = bytes(c if c >= 128 or chr(c).isalnum() or c == ord("_") else ord(" ") for c in range(256))
_PLAIN_MARKER = ("",)  # the pieces of a marker made of ASCII letters, digits and ``_`` only
_PIECES: dict[str, tuple[str, ...]] = {}  # marker -> _pieces_of(marker)


def _pieces(marker: str) -> tuple[str, ...]:
    """``_pieces_of(marker)``, worked out once per marker and process."""
    pieces = _PIECES.get(marker)
    if pieces is None:
        pieces = _PIECES[marker] = _pieces_of(marker)
    return pieces


def _pieces_of(marker: str) -> tuple[str, ...]:
    """What the text's words (``_words``, a space at each end) hold wherever the text holds
    ``marker``: each run of ASCII letters, digits and ``_`` in it, with a space on each side
    where the marker has a character next to it there, since that character ends the
    run's word in the text too (``args[`` is in the text only if ``args `` is in its words:
    a word ends with ``args``; `` is `` only if ``is`` is a word). ``_PLAIN_MARKER`` for a
    marker that is one such run (the words hold it exactly where the text does); nothing
    (look in the text) for a marker with other than ASCII, where that character would not
    end a word."""
    if not marker.isascii():
        return ()
    runs = list(_PLAIN.finditer(marker))
    if len(runs) == 1 and runs[0].group() == marker:
        return _PLAIN_MARKER
    return tuple((" " if run.start() > 0 else "") + run.group() + (" " if run.end() < len(marker) else "")
                 for run in runs)


def _words(answers: _Answers) -> str:
    """The text's words, each once, joined by spaces and with one at each end: its runs of
    characters between ASCII separators (every ASCII character but letters, digits and
    ``_``). A marker or word made of ASCII letters, digits and ``_`` is in the text exactly
    where it is in this, which is a fifth of the text or less: wherever it is in the text,
    it lies inside one run (it holds no separator), so inside that run's word; wherever it
    is here, it lies inside one word (it holds no space), so in the text where that word
    is. (Split as UTF-8, where a non-ASCII character's bytes are never ASCII: each word
    decodes whole.)"""
    words = answers.words
    if words is None:
        runs = answers.text.encode("utf-8", "surrogatepass").translate(_SEPARATORS).split()
        words = answers.words = f" {b' '.join(set(runs)).decode('utf-8', 'surrogatepass')} "
    return words
