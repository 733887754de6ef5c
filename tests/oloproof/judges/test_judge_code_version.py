"""The judges' code versions change whenever the code does, or someone says why they need not.

Each judge's ``VERSION`` (``LLMJudge.VERSION``, unless the judge's own reading of a case moved
its own) is part of its identity: a judgment or a calibration made by another version is not
reused. It is kept by hand, so that an upgrade that changes nothing a
judge decides keeps every judgment and calibration. Kept by hand, it was also forgotten: three
changes to how replies are read left it at 2, and judgments the older reading had passed were
served from the cache. This test holds a digest of the judges' code (what a case becomes as a
request, and a provider's body as a verdict) beside the version it was recorded for: any change
to that code fails here until one of these is done.

- The change can alter a request or a verdict: bump the version of every judge it can alter
  (``LLMJudge.VERSION`` past the highest for shared code, a judge's own for its ``prepare``),
  say what changed in the comment above it and in docs/judges.md, then record the new versions
  and digest below.
- It cannot (a rename, a refactor, the wording of an error): record the new
  digest below with the same version, and say so in the commit message.

The digest is of the syntax tree, without docstrings and comments (which the tree does not
hold), so formatting and wording of documentation do not count; empty fields are left out, so
the same code gives the same digest on every Python this project supports.
"""

from __future__ import annotations

import ast
import hashlib
from collections.abc import Iterator
from pathlib import Path

import oloproof
from oloproof.evaluators.judges import LLMJudge

SRC = Path(oloproof.__file__).resolve().parent

JUDGE_CODE = (
    "answering_statuses.py",
    "evaluators/judges.py",
    "evaluators/judge_reply.py",
    "evaluators/loose_objects.py",
    "jsonkeys.py",
    "prompts/__init__.py",
    "providers/__init__.py",
    "providers/_body.py",
    "providers/_http.py",
    "providers/anthropic_messages.py",
    "providers/openai_chat.py",
)
"""The code between a case and a judge's verdict: building the request, reading the reply."""

RECORDED = (
    {"GroundednessJudge": 11, "CitationSupportJudge": 11, "AnswerJudge": 11, "RubricJudge": 11},
    "bbef543be8e308f438e880551edbce12761332a8d745d27a99af1739a8da8477",
)
"""(each judge's ``VERSION``, the digest of ``JUDGE_CODE``) when the code was last reviewed."""


def _shape(node: object) -> Iterator[str]:
    if isinstance(node, ast.AST):
        yield type(node).__name__ + "("
        for name in node._fields:
            value = getattr(node, name, None)
            if value is None or value == []:
                continue
            yield name + "="
            yield from _shape(value)
        yield ")"
    elif isinstance(node, list):
        yield "["
        for item in node:
            if not _is_documentation(item):
                yield from _shape(item)
        yield "]"
    else:
        yield repr(node)


def _is_documentation(node: object) -> bool:
    """A string standing alone as a statement: a docstring, or one documenting a name."""
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    )


def judge_code_digest() -> str:
    digest = hashlib.sha256()
    for name in JUDGE_CODE:
        tree = ast.parse((SRC / name).read_text(encoding="utf-8"))
        digest.update(name.encode() + b"\0" + "".join(_shape(tree)).encode() + b"\0")
    return digest.hexdigest()


def judge_versions() -> dict[str, int]:
    """Each judge's class name and ``VERSION``."""
    return {judge.__name__: judge.VERSION for judge in LLMJudge.__subclasses__()}


def test_the_judges_code_version_changes_with_the_code() -> None:
    now = (judge_versions(), judge_code_digest())
    assert now == RECORDED, (
        f"the judges' code changed since versions {RECORDED[0]} were recorded: if the change "
        "can alter a request or a verdict, bump the version of each judge it can alter "
        "(judgments and calibrations of the older version then no longer count) and document "
        f"it; either way, record RECORDED = {now!r} in {Path(__file__).name}"
    )


def test_the_digest_ignores_documentation_and_layout() -> None:
    plain = "def f(x):\n    return x + 1\n"
    documented = '"""A module."""\n\n\ndef f(x):  # why\n    """Add one."""\n    return (\n        x + 1\n    )\n'
    changed = "def f(x):\n    return x + 2\n"
    shapes = ["".join(_shape(ast.parse(text))) for text in (plain, documented, changed)]
    assert shapes[0] == shapes[1] != shapes[2]
