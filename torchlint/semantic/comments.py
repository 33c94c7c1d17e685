"""Comments that document a statement's choice (a non-strict load, an unsafe load, a summed loss).

* ``comments_within(ctx, node)``: the comments on the lines ``node`` spans.
* ``documenting_comments(ctx, node)``: the comments on the statement holding ``node`` (its
  lines, a trailing comment included) and the block of comment-only lines directly above it;
  when that statement opens a block (the first in a ``for``/``with``/``if`` body), the comments
  above that block's header too; and the comment block heading the enclosing function's body
  (above its first statement), which speaks for the whole function.
* ``statement_comments(ctx, node)``: only the statement's own comments and the comment-only
  lines directly above it.
* ``documented(ctx, node, topic)``: one of those comments matches ``topic`` (a regex that says
  what the comment must be about, e.g. ``strict``), so the author explains the choice there
  (``own_statement=True``: one of the statement's own comments);
  with ``docstrings=True`` the docstrings of the enclosing functions and classes
  (``enclosing_docstrings``) count too (a class docstring's "Note: always applies dropout").

Comments are lexed as the suppression comments are (``noqa.comments_by_line``), so a ``#``
inside a string is no comment.
"""

from __future__ import annotations

import re
import weakref

import libcst as cst

from torchlint.noqa import comments_by_line

_CACHE: "weakref.WeakKeyDictionary[object, dict[int, str]]" = weakref.WeakKeyDictionary()


def _comments(ctx) -> dict[int, str]:
    """Line -> the comment on it, for the whole file (computed once per file)."""
    found = _CACHE.get(ctx)
    if found is None:
        found = _CACHE[ctx] = comments_by_line(ctx.text)
    return found


def comments_within(ctx, node: cst.CSTNode) -> list[str]:
    """The comments on the lines ``node`` spans."""
    span = ctx.position(node)
    comments = _comments(ctx)
    return [comments[line] for line in range(span.start.line, span.end.line + 1) if line in comments]


def _statement(ctx, node: cst.CSTNode) -> cst.CSTNode:
    """The simple statement line (or compound statement header's statement) holding ``node``."""
    for anc in [node, *ctx.ancestors(node)]:
        if isinstance(anc, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            return anc
    return node


def documenting_comments(ctx, node: cst.CSTNode) -> list[str]:
    """The comments on the statement holding ``node``, in the comment-only lines directly above
    it, above the blocks it is the first statement of, and heading its function's body."""
    statement = _statement(ctx, node)
    comments = _comments(ctx)
    found = statement_comments(ctx, node)
    opener = _opened_by(ctx, statement)
    while opener is not None:
        header = ctx.position(opener).start.line
        found += [comments[header]] if header in comments else []
        found += _above(ctx, comments, header)
        opener = _opened_by(ctx, opener)
    function = ctx.enclosing_function(statement)
    if function is not None and isinstance(function.body, cst.IndentedBlock) and function.body.body[0] is not statement:
        found += _above(ctx, comments, ctx.position(function.body.body[0]).start.line)
    return found


def _above(ctx, comments: dict[int, str], line: int) -> list[str]:
    """The block of comment-only lines directly above ``line``."""
    lines = ctx.text.splitlines()
    found = []
    line -= 1
    while line >= 1 and line in comments and lines[line - 1].lstrip().startswith("#"):
        found.append(comments[line])
        line -= 1
    return found


def _opened_by(ctx, statement: cst.CSTNode) -> cst.BaseCompoundStatement | None:
    """The compound statement (not a function or class) whose body starts with ``statement``."""
    block = ctx.parent(statement)
    compound = ctx.parent(block) if isinstance(block, cst.IndentedBlock) else None
    if isinstance(compound, cst.BaseCompoundStatement) and not isinstance(compound, (cst.FunctionDef, cst.ClassDef)) \
            and block.body and block.body[0] is statement:
        return compound
    return None


def enclosing_docstrings(ctx, node: cst.CSTNode) -> list[str]:
    """The docstrings of the functions and classes ``node`` is in, innermost first."""
    return [doc for anc in ctx.ancestors(node) if isinstance(anc, (cst.FunctionDef, cst.ClassDef))
            for doc in [anc.get_docstring()] if doc]


def statement_comments(ctx, node: cst.CSTNode) -> list[str]:
    """The comments on the statement holding ``node`` (on ``node``'s own lines when that is a
    compound statement's header) and in the comment-only lines directly above it (none of the
    blocks or the function it is in)."""
    statement = _statement(ctx, node)
    span = ctx.position(node if isinstance(statement, cst.BaseCompoundStatement) else statement)
    comments = _comments(ctx)
    found = [comments[line] for line in range(span.start.line, span.end.line + 1) if line in comments]
    return found + _above(ctx, comments, span.start.line)


def documented(ctx, node: cst.CSTNode, topic: re.Pattern, docstrings: bool = False, own_statement: bool = False) -> bool:
    """A comment on or directly above ``node``'s statement matches ``topic``; with
    ``docstrings``, the docstring of a function or class ``node`` is in may say it instead
    (``topic`` must then name what it is about: a class docstring covers every method). With
    ``own_statement``, only the statement's own comments count (``statement_comments``): for a
    choice made statement by statement, which a comment heading the function does not explain."""
    # Where no comment of the file matches, none near ``node`` can: no position is needed
    # (positions cost a parse), only the docstrings, if asked.
    if _mentioned(ctx, topic):
        texts = statement_comments(ctx, node) if own_statement else documenting_comments(ctx, node)
        if any(topic.search(text) for text in texts):
            return True
    return docstrings and any(topic.search(text) for text in enclosing_docstrings(ctx, node))


_MENTIONED: "weakref.WeakKeyDictionary[object, dict[re.Pattern, bool]]" = weakref.WeakKeyDictionary()


def _mentioned(ctx, topic: re.Pattern) -> bool:
    """Some comment of the file matches ``topic`` (once per file and topic)."""
    found = _MENTIONED.setdefault(ctx, {})
    if topic not in found:
        found[topic] = any(topic.search(text) for text in _comments(ctx).values())
    return found[topic]
