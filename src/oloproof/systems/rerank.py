"""What a reranker may return: the candidates it was given, reordered, some perhaps dropped.

A reranker (``oloproof diagnose --intervention reranker``) is the user's function
``(input, candidates) -> candidates``. Its output is recorded as the intervention's ranking and
the context is assembled from it, so a passage it adds, repeats, relabels or rewrites would
be credited to "reranking" although no ranking did it: a passage the retriever never returned
could turn a miss into a recovery. ``reordered`` therefore accepts an output only when each of
its passages is one of the candidates (the same ``doc_id``, ``chunk_id`` and ``text``; a new
``score`` is the reranker's to give, if it is a finite number the ledger can record), none more
often than it was given. Anything else raises ``RerankerOutputError`` naming the first
offending position and what is wrong with it; so does a reranker that fails building a passage
(``Passage(score=float("nan"))`` raises inside it: ``built_badly``). A reranker that returns
a generator (or another iterable that runs code as it is read) is read on the thread it ran on
(``lazy``, ``drawn``): its code, hanging or endless, must not hold up the event loop that the
other cases share, and it is read no further than one passage past the candidates it was given.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pydantic import ValidationError

from oloproof.sdk import Passage, malformed_artifact

_RULE = "a reranker may reorder or drop the candidates it is given, and nothing else"

_Key = tuple[str, str | None, str | None]


class RerankerOutputError(Exception):
    """A reranker returned something other than a reordering of the candidates it was given.

    Deliberately not an ``OloproofError``, which stops a run: this is user code misbehaving on
    one case, so that case errors (recorded with this message) and the run goes on.
    """


def _key(passage: Passage) -> _Key:
    return passage.doc_id, passage.chunk_id, passage.text


def reordered(given: Sequence[Passage], returned: Any) -> tuple[Passage, ...]:
    """``returned`` as passages, when it reorders (and may drop) ``given``; otherwise raise
    ``RerankerOutputError``. Rescored passages keep their new scores."""
    passages = _as_passages(returned)
    left = Counter(_key(p) for p in given)
    for position, passage in enumerate(passages, start=1):
        key = _key(passage)
        if left[key] > 0:
            left[key] -= 1
            continue
        raise _malformed(f"position {position} ({passage.doc_id}) {_why(key, given)}")
    return passages


def lazy(returned: Any) -> bool:
    """Whether reading ``returned`` may run the reranker's code: any iterable but a list, a
    tuple, text or a mapping (those are read as they are, and rejected or accepted at once)."""
    return isinstance(returned, Iterable) and not isinstance(
        returned, list | tuple | str | bytes | Mapping
    )


def drawn(returned: Iterable[Any], given: int) -> list[Any]:
    """The items of a ``lazy`` output, up to one more than the ``given`` candidates: a reranker
    may return no more than it was given, so the one past them is already malformed, and an
    endless generator stops there."""
    return list(itertools.islice(returned, given + 1))


def built_badly(exc: BaseException) -> RerankerOutputError | None:
    """The error a reranker's case records when the reranker raised ``exc`` building one of
    the SDK's types wrongly (``Passage(score=nan)``); None for anything else it raised.

    Not the malformed artifact that stops a run: a stage's artifact is the adapter's, a
    reranker's output is one case's.
    """
    malformed = malformed_artifact(exc)
    return None if malformed is None else _malformed(f"it built a {malformed}")


def _as_passages(returned: Any) -> tuple[Passage, ...]:
    if isinstance(returned, str | bytes | Mapping) or not isinstance(returned, Iterable):
        raise _malformed(f"it returned {type(returned).__name__}, not a list of passages")
    passages = []
    for position, item in enumerate(returned, start=1):
        if isinstance(item, Passage):
            # Checked again: ``model_copy(update=...)`` skips validation, so a passage can hold
            # a NaN score (or a score that is text) that the ledger cannot record.
            fields, what = dict(item), f"position {position} ({item.doc_id}) is not a valid passage"
        elif isinstance(item, Mapping):  # a passage as data, which Retrieval also accepts
            fields, what = dict(item), f"position {position} is not a passage"
        else:
            raise _malformed(f"position {position} is a {type(item).__name__}, not a Passage")
        try:
            passages.append(Passage.model_validate(fields))
        except ValidationError as exc:
            raise _malformed(f"{what}: {_first(exc)}") from None
    return tuple(passages)


def _first(exc: ValidationError) -> str:
    error = exc.errors()[0]
    where = ".".join(str(part) for part in error["loc"])
    return f"{where}: {error['msg']}" if where else error["msg"]


def _why(key: _Key, given: Sequence[Passage]) -> str:
    """Why a returned passage matches none of the candidates still unused: what it shares with
    one, if anything (its text, else its doc_id and chunk_id), stated as found."""
    doc_id, chunk_id, text = key
    times = sum(_key(p) == key for p in given)
    if times:
        return f"repeats a passage it was given {'once' if times == 1 else f'{times} times'}"
    why = "is not among the candidates it was given"
    for number, candidate in enumerate(given, start=1):
        if text is not None and candidate.text == text:
            return f"{why}: its text is candidate {number}'s ({candidate.doc_id})"
    for number, candidate in enumerate(given, start=1):
        if (candidate.doc_id, candidate.chunk_id) == (doc_id, chunk_id):
            named = "doc_id" if chunk_id is None else "doc_id and chunk_id"
            return f"{why}: candidate {number} has that {named} with other text"
    return why


def _malformed(why: str) -> RerankerOutputError:
    return RerankerOutputError(f"the reranker's output is malformed: {why}; {_RULE}")
