"""What a user's code touches: the system decorators, the per-case recorder and artifact types.

Artifacts are the typed records that retrieval and citation evaluators read. Each kind has a
versioned name (``retrieval/v1``, ``context/v1``, ``citations/v1``) and is stored in the ledger as
the plain mapping ``Model.model_dump(mode="json", exclude_none=True)``. Positions are 1-based
and recorded exactly as the system gives them: Oloproof never re-ranks.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import operator
import threading
import weakref
from collections.abc import Callable, Coroutine, Generator, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    WithJsonSchema,
    field_validator,
)

from oloproof.errors import ArtifactError, ConfigError
from oloproof.usercode import lone_surrogate


class _Artifact(BaseModel):
    # A NaN or infinite score is refused here: the ledger records finite numbers only.
    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)


# Text a field holds as given. pydantic reads a text's characters only when a constraint makes
# it: a zero minimum length has it read every one, in its own code, so that a lone surrogate
# (which no ledger can store) is refused where the field is known (``_first_error`` words it).
# A check of ours per field cost as much again as building the artifact. The published schema
# says what the field is: a string.
_Text = Annotated[str, Field(min_length=0), WithJsonSchema({"type": "string"})]


class Passage(_Artifact):
    """One retrieved candidate, in the retriever's order."""

    doc_id: str = Field(min_length=1, description="The document the passage comes from.")
    chunk_id: _Text | None = Field(default=None, description="The chunk within the document.")
    score: float | None = Field(default=None, description="The retriever's score, as given.")
    text: _Text | None = Field(default=None, description="The passage text.")


class TokenCount(_Artifact):
    """What a system's ``count_tokens`` says of one passage. Strictly a whole number, 0 or
    more: ``None`` would switch the budget off and ``True`` count as 1, without a word."""

    tokens: int = Field(ge=0, strict=True, description="The passage's size in tokens.")

    @field_validator("tokens", mode="before")
    @classmethod
    def _whole(cls, value: Any) -> Any:
        # An integer of another type (NumPy's int64) is the number it holds; a bool, a float
        # or text is not, and the strict check refuses it.
        if type(value) is not int and not isinstance(value, bool | float | str):
            with contextlib.suppress(TypeError):
                return operator.index(value)
        return value


class Retrieval(_Artifact):
    """The ranked candidates a retriever returned for one query (``retrieval/v1``)."""

    query: _Text | None = Field(default=None, description="The query that was searched.")
    depth: int | None = Field(default=None, ge=0, description="How many candidates were asked for.")
    candidates: tuple[Passage, ...] = Field(
        default=(), description="The candidates in the retriever's order; position 1 first."
    )


class ContextItem(_Artifact):
    """A passage that reached the model."""

    doc_id: str = Field(min_length=1, description="The document the passage comes from.")
    chunk_id: _Text | None = Field(default=None, description="The chunk within the document.")
    position: int | None = Field(
        default=None, ge=1, description="Its 1-based position in the retrieval it came from."
    )
    tokens: int | None = Field(default=None, ge=0, description="Its size as the system counts it.")
    text: _Text | None = Field(default=None, description="The passage text given to the model.")


class DroppedItem(_Artifact):
    """A retrieved passage that was left out of the context, and why."""

    doc_id: str = Field(min_length=1, description="The document the passage comes from.")
    chunk_id: _Text | None = Field(default=None, description="The chunk within the document.")
    position: int | None = Field(
        default=None, ge=1, description="Its 1-based position in the retrieval it came from."
    )
    tokens: int | None = Field(default=None, ge=0, description="Its size as the system counts it.")
    reason: str = Field(
        min_length=1, description="Why it was left out, e.g. `top_k` or `token_budget`."
    )


class Context(_Artifact):
    """What the model was given (``context/v1``)."""

    items: tuple[ContextItem, ...] = Field(default=(), description="Passages given to the model.")
    dropped: tuple[DroppedItem, ...] = Field(default=(), description="Passages left out.")
    token_budget: int | None = Field(default=None, ge=0, description="The budget applied, if any.")
    source: Literal["retrieval", "gold"] = Field(
        default="retrieval",
        description="`retrieval` when assembled from the retrieval, `gold` under diagnosis.",
    )


class Citations(_Artifact):
    """The passage ids an answer cites (``citations/v1``)."""

    ids: tuple[_Text, ...] = Field(default=(), description="Cited document ids, in answer order.")


class ModelCall(_Artifact):
    """One call a system made to a model, with what it cost (``model_call/v1``)."""

    provider: str = Field(min_length=1, description="`openai` or `anthropic` (the protocol).")
    model: str = Field(min_length=1, description="The model asked for.")
    request_key: str = Field(
        min_length=1, description="blake3 key of the exact request (URL and body)."
    )
    input_tokens: int | None = Field(default=None, ge=0, description="Prompt tokens, as reported.")
    output_tokens: int | None = Field(default=None, ge=0, description="Reply tokens, as reported.")
    cost: float | None = Field(
        default=None, ge=0, description="With both prices configured: what the call cost."
    )
    reply_id: _Text | None = Field(default=None, description="The provider's id of the reply.")
    reply_model: _Text | None = Field(default=None, description="The model that answered.")
    system_fingerprint: _Text | None = Field(default=None, description="The backend's fingerprint.")
    finish_reason: _Text | None = Field(default=None, description="Why the reply ended.")
    attempts: int = Field(default=1, ge=1, description="Tries the call took.")


ARTIFACT_MODELS: dict[str, type[_Artifact]] = {
    "retrieval/v1": Retrieval,
    "context/v1": Context,
    "citations/v1": Citations,
    "model_call/v1": ModelCall,
}


def validate_artifact(kind: str, value: Any) -> dict[str, Any]:
    """Validate one artifact of ``kind`` and return its stored mapping.

    Raises ``ArtifactError`` naming the kind and the first problem.
    """
    model = ARTIFACT_MODELS.get(kind)
    if model is None:
        known = ", ".join(sorted(ARTIFACT_MODELS))
        raise ArtifactError(f"unknown artifact kind {kind!r} (known kinds: {known})")
    if kind == "citations/v1" and isinstance(value, list | tuple):
        value = {"ids": value}
    try:
        parsed = value if isinstance(value, model) else model.model_validate(value)
    except ValidationError as exc:
        raise ArtifactError(f"malformed {kind} artifact: {_first_error(exc)}") from None
    return parsed.model_dump(mode="json", exclude_none=True)


def malformed_artifact(exc: BaseException) -> str | None:
    """``malformed Passage artifact: doc_id: …`` when ``exc`` is the validation error of one of
    these artifact types (built or validated anywhere, user code included), else None.

    The type is the one pydantic was validating when it raised: the innermost frame of the
    error is ``BaseModel.__init__`` (``self``) or a ``model_validate*`` (``cls``). A user's own
    pydantic model of the same name is not mistaken for it.
    """
    if not isinstance(exc, ValidationError):
        return None
    frame = None
    tb = exc.__traceback__
    while tb is not None:
        frame, tb = tb.tb_frame, tb.tb_next
    if frame is None:
        return None
    owner = frame.f_locals.get("self")
    model = frame.f_locals.get("cls", type(owner) if owner is not None else None)
    if not (isinstance(model, type) and issubclass(model, _Artifact)):
        return None
    return f"malformed {model.__name__} artifact: {_first_error(exc)}"


def _first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    loc = ".".join(str(p) for p in err["loc"]) or "(root)"
    given = err.get("input")
    # pydantic's own words for a lone surrogate say the text "cannot be parsed".
    wrong = (
        lone_surrogate(given)
        if err["type"] == "string_unicode" and isinstance(given, str)
        else None
    )
    return f"{loc}: {err['msg'] if wrong is None else f'the text {wrong}'}"


class Recorder:
    """Collects the artifacts one case records; obtained with ``current_case()``."""

    def __init__(self, declared: Iterable[str], case_id: str) -> None:
        self._declared = frozenset(declared)
        self._case_id = case_id
        # Held by each record and by close(): a thread recording as its case returns either
        # records before the artifacts are read, or is late.
        self._lock = threading.Lock()
        self._closed = False
        # The run this case is part of: where a late record is told (two runs in one process,
        # each in a thread of its own, each hear only of their own).
        self._run = _watching.get()
        self.artifacts: dict[str, list[dict[str, Any]]] = {}

    def close(self) -> None:
        """End the case: its system returned and its artifacts are read; a record from now on
        is late (``LateRecords``)."""
        with self._lock:
            self._closed = True

    def record(self, kind: str, value: Any) -> None:
        """Validate and keep an artifact of ``kind``; it must be declared in ``records``."""
        # A recorder kept past its case (current_case() called once and its result kept) would
        # put the next case's records where nothing reads them: that case would read as having
        # recorded none (missing or excluded on every metric on them) and nothing would say
        # why. Where no case is current (a thread the system started, handed this recorder) it
        # records.
        if _current.get(self) is not self:
            raise ArtifactError(
                f"the system recorded a {kind} artifact through the recorder of another case (a "
                "recorder kept from an earlier call of current_case()); call current_case() in "
                "each case"
            )
        if kind not in self._declared:
            declared = ", ".join(sorted(self._declared)) or "none"
            raise ArtifactError(
                f"the system recorded a {kind} artifact but declares records=({declared})"
            )
        with self._lock:
            if self._closed:
                raise _late(self._run, self._case_id, kind)
            self.artifacts.setdefault(kind, []).append(validate_artifact(kind, value))

    def retrieval(self, retrieval: Retrieval | Mapping[str, Any]) -> None:
        self.record("retrieval/v1", retrieval)

    def context(self, context: Context | Mapping[str, Any]) -> None:
        self.record("context/v1", context)

    def citations(self, ids: Citations | Iterable[str]) -> None:
        self.record("citations/v1", ids if isinstance(ids, Citations) else list(ids))


_current: contextvars.ContextVar[Recorder] = contextvars.ContextVar("oloproof_current_case")


# The tasks a record after its case returned was refused in: the run says it, so their
# exception is not printed again as one nobody retrieved.
_late_tasks: weakref.WeakSet[asyncio.Task[Any]] = weakref.WeakSet()


def _late(run: LateRecords | None, case_id: str, kind: str) -> ArtifactError:
    # Through the recorder kept past its case as well: in a thread of a later case, where no
    # case is current, the recorder of another case is not refused (``record``).
    message = (
        f"case {case_id!r}: the system recorded a {kind} artifact after the case returned, too "
        "late to count for it: from a task or thread the case started and did not wait for "
        "(wait for it before returning), or through the case's recorder kept for a later case "
        "(call current_case() in each case)"
    )
    # Raised where it happens too, but there it is in a task or thread nobody waits for: the
    # run reads it from its LateRecords.
    if run is not None:
        run.refused.append(message)
    with contextlib.suppress(RuntimeError):  # a thread's record: no task
        task = asyncio.current_task()
        if task is not None:
            _late_tasks.add(task)
    return ArtifactError(message)


class LateRecords:
    """What the systems of one run record after their cases returned, and the work their
    cases started on the run's loop (asyncio tasks, calls on its executor) that may still do so.

    A record that comes too late would leave its case reading as having recorded none
    (missing or excluded on every metric on it) without a word; a task still waiting when the
    run ends is cancelled with it, its record never made, and an executor's call records once
    the run has decided. The run checks between cases (``check``) and, before it decides, waits for
    that work (``settle``).
    """

    def __init__(self) -> None:
        self._started: dict[asyncio.Future[Any], Recorder] = {}
        # What recorders of the run's cases were asked to record after their case returned,
        # each as the error saying so.
        self.refused: list[str] = []

    def note(self, work: asyncio.Future[Any], recorder: Recorder | None) -> None:
        """Keep ``work`` while it runs when a case of a system that records started it."""
        if recorder is not None and recorder._declared:
            self._started[work] = recorder
            work.add_done_callback(self._ended)

    def _ended(self, work: asyncio.Future[Any]) -> None:
        del self._started[work]
        if work in _late_tasks and not work.cancelled():
            work.exception()  # the run says it: not again as an exception nobody retrieved

    def check(self) -> None:
        """Raise the ``ArtifactError`` of the first record made after its case returned."""
        if self.refused:
            raise ArtifactError(self.refused[0])

    async def settle(self, timeout_s: float) -> None:
        """Once every case has returned: wait up to ``timeout_s`` for the work they started,
        then ``check``; work still running then stops the run, its records unknowable. (A
        case that errored keeps its recorder open: what it records counts for nothing.)"""
        waiting = [work for work, recorder in self._started.items() if recorder._closed]
        if waiting:
            await asyncio.wait(waiting, timeout=timeout_s)
        await asyncio.sleep(0)  # a callback the last case scheduled runs first
        self.check()
        for work in waiting:
            if not work.done():
                raise ArtifactError(
                    f"case {self._started[work]._case_id!r}: the system started an asyncio "
                    f"task (or executor call) that was still running {timeout_s:g} s after the "
                    "last case returned; what it records once the run has ended cannot count "
                    "for the case; wait for it before returning"
                )


# The run whose cases are executing: each case's recorder tells it of a late record.
_watching: contextvars.ContextVar[LateRecords | None] = contextvars.ContextVar(
    "oloproof_run_records", default=None
)

R = TypeVar("R")


@dataclass
class _Watched:
    """A loop whose runs watch their cases' work: how many do, and what it did before."""

    runs: int
    task_factory: Any
    run_in_executor: Any


# One factory a loop: runs may overlap on one loop (a program gathering two ``execute_run``),
# each case's work noted to its own run through its recorder, and the loop given back its own
# once the last ends, whatever order they end in.
_watched: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Watched] = (
    weakref.WeakKeyDictionary()
)


@contextlib.contextmanager
def watching_late_records() -> Iterator[LateRecords]:
    """``LateRecords`` of the cases run on the running loop while in the block: each task
    created and each call handed to its executor is noted with the recorder of the case that
    made it, to that recorder's run."""
    loop = asyncio.get_running_loop()
    watched = _watched.get(loop)
    if watched is None:
        watched = _watched[loop] = _Watched(0, loop.get_task_factory(), loop.run_in_executor)
        loop.set_task_factory(_noting_tasks(watched.task_factory))
        loop.run_in_executor = _noting_calls(watched.run_in_executor)  # type: ignore[method-assign]
    watched.runs += 1
    watch = LateRecords()
    watching = _watching.set(watch)  # the cases' tasks, created below, inherit it
    try:
        yield watch
    finally:
        _watching.reset(watching)
        watched.runs -= 1
        if not watched.runs:
            del _watched[loop]
            loop.set_task_factory(watched.task_factory)
            loop.run_in_executor = watched.run_in_executor  # type: ignore[method-assign]


def join_late_records(watch: LateRecords) -> None:
    """Make ``watch`` (a ``watching_late_records`` still open) the run of the cases executed in
    the current context: a Ray replica's case, whose task its loop creates outside that block."""
    _watching.set(watch)


def _noted(work: asyncio.Future[Any], owner: Recorder | None) -> None:
    if owner is not None and owner._run is not None:
        owner._run.note(work, owner)


def _noting_tasks(previous: Any) -> Any:
    def factory(
        loop: asyncio.AbstractEventLoop,
        coro: Generator[Any, None, R] | Coroutine[Any, Any, R],
        /,
        **kwargs: Any,
    ) -> asyncio.Future[R]:
        # ``context`` (and on later Pythons ``name``, ``eager_start``) as create_task gives them.
        task = (
            previous(loop, coro, **kwargs) if previous else asyncio.Task(coro, loop=loop, **kwargs)
        )
        context = kwargs.get("context")
        owner = context.get(_current, None) if context is not None else _current.get(None)
        if isinstance(task, asyncio.Task):
            _noted(task, owner)
        return task

    return factory


def _noting_calls(run_in_executor: Any) -> Any:
    def in_executor(
        executor: concurrent.futures.Executor | None, func: Callable[..., R], *args: Any
    ) -> asyncio.Future[R]:
        future: asyncio.Future[R] = run_in_executor(executor, func, *args)
        _noted(future, _current.get(None))
        return future

    return in_executor


def current_case() -> Recorder:
    """The recorder of the case being executed; only valid inside a system call."""
    try:
        return _current.get()
    except LookupError:
        # Said of a thread too: a thread the system starts (a ThreadPoolExecutor's included)
        # does not see the case its system is running, and "outside a running case" alone
        # would send the user looking for a case that never started.
        raise ArtifactError(
            "current_case() was called where no case is running: outside a system's call, or in "
            "a thread the system started, which does not see its case; call current_case() in "
            "the system itself and hand the recorder to the thread"
        ) from None


def _activate(recorder: Recorder) -> contextvars.Token[Recorder]:
    return _current.set(recorder)


def _deactivate(token: contextvars.Token[Recorder]) -> None:
    _current.reset(token)


@dataclass(frozen=True)
class SystemInfo:
    """What ``@system`` declares about a callable system."""

    name: str
    version: str
    records: tuple[str, ...]


@dataclass(frozen=True)
class RagInfo:
    """What ``@rag_system`` declares about a staged system (oloproof.yaml may override it)."""

    name: str
    version: str
    depth: int
    top_k: int
    token_budget: int | None
    index_version: str | None


F = TypeVar("F", bound=Callable[..., Any])
C = TypeVar("C", bound=type)


def system(*, name: str, version: str, records: Iterable[str] = ()) -> Callable[[F], F]:
    """Declare a callable system: ``fn(case_input) -> output`` (sync or async)."""
    _named("system", name=name, version=version)
    if isinstance(records, str):  # iterated, it would be one kind a character ('r', 'e', ...)
        raise ArtifactError(
            f"@system(records={records!r}): records is a list of artifact kinds, not one str: "
            f"give records=({records!r},)"
        )
    kinds = tuple(records)
    for kind in kinds:
        if kind not in ARTIFACT_MODELS:
            raise ArtifactError(f"@system(records=...) names unknown artifact kind {kind!r}")

    def mark(fn: F) -> F:
        fn.__oloproof_system__ = SystemInfo(name, version, kinds)  # type: ignore[attr-defined]
        return fn

    return mark


def _named(decorator: str, **texts: object) -> None:
    """Refuse a name or version that is not text, as oloproof.yaml does: it joins the system's
    identity, where an object the ledger cannot record stops the run in words that name
    neither decorator nor setting, and a number would be recorded as another (1.10 as 1.1).
    ``index_version`` may be None."""
    for setting, value in texts.items():
        if value is None and setting == "index_version":
            continue
        if not isinstance(value, str) or not value:
            raise ConfigError(
                f"@{decorator}({setting}={value!r}): {setting} must be text (a str, not empty), "
                "as in oloproof.yaml"
            )


def rag_system(
    *,
    name: str,
    version: str,
    depth: int,
    top_k: int,
    token_budget: int | None = None,
    index_version: str | None = None,
) -> Callable[[C], C]:
    """Declare a staged RAG system: a class with ``retrieve``, ``generate`` and ``count_tokens``.

    ``depth``, ``top_k`` and ``token_budget`` are held to what oloproof.yaml allows them: a
    ``top_k`` or ``token_budget`` of 0 would leave every context empty."""
    _named("rag_system", name=name, version=version, index_version=index_version)
    for setting, value in (("depth", depth), ("top_k", top_k), ("token_budget", token_budget)):
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int) or value < 1
        ):
            raise ConfigError(
                f"@rag_system({setting}={value!r}): {setting} must be a whole number, 1 or "
                "more, as in oloproof.yaml"
            )

    def mark(cls: C) -> C:
        cls.__oloproof_rag__ = RagInfo(name, version, depth, top_k, token_budget, index_version)  # type: ignore[attr-defined]
        return cls

    return mark
