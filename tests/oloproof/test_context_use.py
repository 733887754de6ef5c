"""Which ``generate`` methods read only the passages kept in their context (their cache key then
leaves out how the context was made), read from their bytecode. Anything not plainly
``context.items`` counts as reading the whole context."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from oloproof.fingerprint import of_method
from oloproof.systems.context_use import reads_only_items


def _first(passages: Any) -> str:
    return str(passages[0].text) if passages else ""


class ItemsAtOnce:
    def generate(self, input: Any, context: Any) -> Any:
        return {"answer": _first(context.items)}


class ItemsInLoopsAndTests:
    def generate(self, input: Any, context: Any) -> Any:
        if not context.items:
            return {"answer": ""}
        texts = [p.text for p in context.items]
        best = context.items[0]
        return {"answer": " ".join(t or "" for t in texts) + best.doc_id}


class ItemsInAGenerator:
    async def generate(self, input: Any, ctx: Any) -> Any:
        return {"answer": " ".join(p.doc_id for p in ctx.items)}


def _answer(question: str, context: Any) -> Any:
    return {"answer": question + _first(context.items)}


def _answer_again(question: str, count: int, context: Any) -> Any:
    if count:
        return _answer_again(question, count - 1, context)
    return _answer(question.strip(), context)


class ToAHelperOfTheModule:
    def generate(self, input: Any, context: Any) -> Any:
        return _answer(input["question"].strip(), context)


class ToAHelperThatCallsOthers:
    def generate(self, input: Any, context: Any) -> Any:
        return _answer_again(input["question"], len(input), context)


class ToAMethod:
    def generate(self, input: Any, context: Any) -> Any:
        return self._prompt(input, context)

    def _prompt(self, input: Any, ctx: Any) -> Any:
        return {"answer": _first(ctx.items) if ctx.items else input}


ONLY_ITEMS = [
    ItemsAtOnce,
    ItemsInLoopsAndTests,
    ItemsInAGenerator,
    ToAHelperOfTheModule,
    ToAHelperThatCallsOthers,
    ToAMethod,
]


class Formatted:
    def generate(self, input: Any, context: Any) -> Any:
        return {"answer": f"{context}"}


class Dumped:
    def generate(self, input: Any, context: Any) -> Any:
        return {"answer": repr(context.model_dump())}


class HandedOn:
    def generate(self, input: Any, context: Any) -> Any:
        return {"answer": _first(context)}


def _formatted(question: str, context: Any) -> str:
    return f"{question}: {context}"


class ToAHelperThatFormatsIt:
    def generate(self, input: Any, context: Any) -> Any:
        return {"answer": _answer(input, context) and _formatted(input, context)}


class NotLast:
    def generate(self, input: Any, context: Any) -> Any:
        return _answer_first(context, input)


def _answer_first(context: Any, question: str) -> Any:
    return {"answer": question + _first(context.items)}


class ByKeyword:
    def generate(self, input: Any, context: Any) -> Any:
        return _answer(question=input, context=context)


class ToAnotherObject:
    def __init__(self) -> None:
        self.model = ToAMethod()

    def generate(self, input: Any, context: Any) -> Any:
        return self.model._prompt(input, context)


class ToAMethodAnInstanceHides(ToAMethod):
    def __init__(self) -> None:
        self._prompt = _formatted


class ToAMethodOfAnotherSelf(ToAMethod):
    def generate(self, input: Any, context: Any) -> Any:
        self = ToAMethodAnInstanceHides()
        return self._prompt(input, context)


class ToABuiltin:
    def generate(self, input: Any, context: Any) -> Any:
        return {"answer": str(context)}


class ToADecoratedHelper:
    def generate(self, input: Any, context: Any) -> Any:
        return _wrapped_answer(input, context)


class ByComputedName:
    def generate(self, input: Any, context: Any) -> Any:
        return {"answer": getattr(context, "token" + "_budget")}


class InAComprehension:
    def generate(self, input: Any, context: Any) -> Any:
        return {"answer": [context.token_budget for _ in context.items]}


class InALambda:
    def generate(self, input: Any, context: Any) -> Any:
        size: Callable[[], Any] = lambda: context.dropped  # noqa: E731
        return {"answer": size()}


class Rebound:
    def generate(self, input: Any, context: Any) -> Any:
        items = context.items
        context = {"items": items}
        return {"answer": str(context)}


class ThroughLocals:
    def generate(self, input: Any, context: Any) -> Any:
        return {"answer": str(locals()["context"].token_budget) + _first(context.items)}


class ThroughAFrame:
    def generate(self, input: Any, context: Any) -> Any:
        return {"answer": _caller_context() + _first(context.items)}


def _caller_context() -> str:
    return str(sys._getframe(1).f_locals["context"])


def _logged(function: Any) -> Any:
    @functools.wraps(function)
    def wrapper(*args: Any) -> Any:
        return function(*args)

    return wrapper


_wrapped_answer = _logged(_answer)


class Decorated:
    @_logged
    def generate(self, input: Any, context: Any) -> Any:
        return {"answer": _first(context.items)}


class Static:
    @staticmethod
    def generate(input: Any, context: Any) -> Any:
        return {"answer": _first(context.items)}


class StarArgs:
    def generate(self, *args: Any) -> Any:
        return {"answer": str(args[1])}


WHOLE = [
    Formatted,
    Dumped,
    HandedOn,
    ToAHelperThatFormatsIt,
    NotLast,
    ByKeyword,
    ToAnotherObject,
    ToAMethodAnInstanceHides,
    ToAMethodOfAnotherSelf,
    ToABuiltin,
    ToADecoratedHelper,
    ByComputedName,
    InAComprehension,
    InALambda,
    Rebound,
    ThroughLocals,
    ThroughAFrame,
    Decorated,
    Static,
    StarArgs,
]


def _reached(cls: type) -> frozenset[str]:
    """The names the code its generate reaches uses: its fingerprint's, as a run has them."""
    return of_method(cls, "generate", base_dir=Path(__file__).resolve().parent).names


@pytest.mark.parametrize("cls", ONLY_ITEMS, ids=lambda c: c.__name__)
def test_a_generate_that_reads_only_the_kept_passages_is_seen_to(cls: type) -> None:
    assert reads_only_items(cls, _reached(cls))


@pytest.mark.parametrize("cls", WHOLE, ids=lambda c: c.__name__)
def test_every_other_use_of_the_context_counts_as_reading_all_of_it(cls: type) -> None:
    assert not reads_only_items(cls, _reached(cls))
