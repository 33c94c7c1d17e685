"""GitHub's ``primaryLocationLineHash`` (``torchlint.formats.linehash``), against values that
can be justified without running GitHub's code."""

from __future__ import annotations

import pytest

from torchlint.formats.linehash import line_hashes

M = 2**64


def by_hand(units: list[int]) -> str:
    """The definition, term by term: the first 100 units of a line (past the end of the
    file: one 0xFFFF, then zeros), unit i weighted by 37 ** (99 - i), modulo 2**64, hex."""
    units = (units + [0xFFFF] + [0] * 100)[:100]
    return format(sum(u * 37 ** (99 - i) for i, u in enumerate(units)) % M, "x")


def test_tiny_inputs_derived_by_hand():
    # "a": one line, units 'a' (0x61) then the end marker.
    assert line_hashes("a") == [by_hand([0x61]) + ":1"]
    # "a\nb": line 1 sees a, LF, b, end; line 2 sees b, end.
    assert line_hashes("a\nb") == [by_hand([0x61, 0x0A, 0x62]) + ":1", by_hand([0x62]) + ":1"]
    # Spaces and tabs are not units; CR LF and lone CR are one LF each.
    assert line_hashes(" \ta \r\n\tb") == line_hashes("a\nb") == line_hashes("a\rb")
    # A line of spaces starts at its LF; a final newline starts one more line at the end marker.
    assert line_hashes("a\n  \n") == [by_hand([0x61, 0x0A, 0x0A]) + ":1", by_hand([0x0A]) + ":1", by_hand([]) + ":1"]
    # Each line's window runs on into the lines below it: "x\nx" has two different hashes.
    assert line_hashes("x\nx") == [by_hand([0x78, 0x0A, 0x78]) + ":1", by_hand([0x78]) + ":1"]
    # A character outside the BMP is two UTF-16 units, as JavaScript's charCodeAt sees it.
    assert line_hashes("\U0001F600") == [by_hand([0xD83D, 0xDE00]) + ":1"]


def test_only_the_next_100_units_count():
    """A line's hash ignores what is more than 100 units (non-blank characters) after its start."""
    head = "y" * 99
    assert line_hashes(head + "\nA")[0] == line_hashes(head + "\nB")[0]
    assert line_hashes(head[:-1] + "\nA")[0] != line_hashes(head[:-1] + "\nB")[0]


def test_repeated_windows_count_up():
    """110 lines "z": line k starts at unit 2(k-1) of 220, so lines 1..61 all see 100 units
    (z, LF) * 50 and are numbered :1 .. :61; line 62 sees 98 units, the end marker and a zero."""
    hashes = line_hashes("z\n" * 110)
    same = by_hand([0x7A, 0x0A] * 50)
    assert hashes[:61] == [f"{same}:{n}" for n in range(1, 62)]
    assert hashes[61] == by_hand([0x7A, 0x0A] * 49) + ":1"
    assert len(hashes) == 111  # and the line that starts at the end marker


# Published by GitHub with the algorithm (github/codeql-action, src/fingerprints.test.ts):
# inputs and the hash of every line, computed by the upload action itself.
GITHUB_VECTORS = [
    ("", ["c129715d7a2bc9a3:1"]),
    (" a\nb\n  \t\tc\n d", ["271789c17abda88f:1", "54703d4cd895b18:1", "180aee12dab6264:1", "a23a3dc5e078b07b:1"]),
    (" hello; \t\nworld!!!\n\n\n  \t\tGreetings\n End",
     ["8b7cf3e952e7aeb2:1", "b1ae1287ec4718d9:1", "bff680108adb0fcc:1", "c6805c5e1288b612:1", "b86d3392aea1be30:1",
      "e6ceba753e1a442:1"]),
    *[(text, ["e9496ae3ebfced30:1", "fb7c023a8b9ccb3f:1", "ce8ba1a563dcdaca:1", "e20e36e16fcb0cc8:1",
              "b3edc88f2938467e:1", "c8e28b0b4002a3a0:1", "c129715d7a2bc9a3:1"])
      for text in (" hello; \t\nworld!!!\n\n\n  \t\tGreetings\n End\n",
                   " hello; \t\nworld!!!\r\r\r  \t\tGreetings\r End\r",
                   " hello; \t\r\nworld!!!\r\n\r\n\r\n  \t\tGreetings\r\n End\r\n",
                   " hello; \t\nworld!!!\r\n\n\r  \t\tGreetings\r End\r\n")],
    ("Lorem ipsum dolor sit amet.\n" * 10,
     ["a7f2ff13bc495cf2:1", "a7f2ff13bc495cf2:2", "a7f2ff13bc495cf2:3", "a7f2ff13bc495cf2:4", "a7f2ff13bc495cf2:5",
      "a7f2ff13bc495cf2:6", "a7f2ff1481e87703:1", "a9cf91f7bbf1862b:1", "55ec222b86bcae53:1", "cc97dc7b1d7d8f7b:1",
      "c129715d7a2bc9a3:1"]),
]


@pytest.mark.parametrize(("text", "expected"), GITHUB_VECTORS)
def test_githubs_published_vectors(text, expected):
    assert line_hashes(text) == expected


def test_empty_file_vector_is_the_end_marker_by_hand():
    """GitHub's "" vector (and the extra last line of a file ending in a newline) is the
    window of the end marker alone: 0xFFFF * 37**99 mod 2**64."""
    assert by_hand([]) == "c129715d7a2bc9a3"
