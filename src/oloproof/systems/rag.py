"""A staged RAG system: Oloproof calls ``retrieve``, assembles the context, calls ``generate``.

Context assembly (recorded as ``context/v1`` with ``source: retrieval``), in the retriever's
order and never re-ranked: a candidate past position ``top_k`` is dropped with reason ``top_k``
(its tokens are not counted); otherwise, with a ``token_budget``, a candidate whose
``count_tokens`` would take the total past the budget is dropped with reason ``token_budget``
and the next ones are still tried; the rest are kept.

Under a diagnosis (``ExecContext.intervention``): ``gold-context`` gives generate the case's gold
passages as its whole context; ``top-k``, ``reranker``, ``token-budget`` and ``replay-control``
replay the retrieval the parent run recorded (``ExecContext.replay``) instead of calling
retrieve, and assemble the context with the intervention's cut and budget. A reranker's order
is recorded as a second ``retrieval/v1`` after the replayed one; evaluators read the last, so
every retrieval metric scores the ranking the intervention made. That order must be the
candidates it was given, reordered and perhaps fewer (``rerank.reordered``): a reranker that
adds, repeats or alters a passage, or builds one the ledger cannot record (a NaN score), errors
the case instead. A system whose generate reads state its retrieve leaves behind (below) calls
retrieve first under every intervention, for that state alone: its retrieval is stored as its
stage but is not the context, and under a replay it must be the very retrieval replayed, or
the case errors (``RetrievalDriftError``) rather than generate read another retrieval's state.
A retrieve that returns more candidates than its depth returned a malformed retrieval, which
stops the run as any malformed artifact does.

Stage identities (each stage output is an ``oloproof.stage`` event found by identity), each
with the code fingerprint of its own method (``oloproof.fingerprint.of_method``: the method, not
the rest of the class; what it reaches in the project; the constants and class attributes it
reads; the class it is called on, so two subclasses never share a stage output):

- retrieve: the system's version, index_version, depth, the case input (as stored, and beside
  the case's id where that replaced a secret: ``events.kept_apart``) and retrieve's
  fingerprint. top_k and token_budget are outside it, so changing them reuses every retrieval;
  editing generate (or anything only generate reads) does too.
- generate: the system's version, the case input, the exact passages assembled into the context
  and generate's fingerprint; the budget, the dropped passages and the source (retrieval or
  gold) only when the code generate reaches reads them by name (``context.token_budget``):
  most read only the kept passages, and a budget raised then regenerates only where they
  changed. When generate reads state that retrieve's code changes (``context_use.written``:
  ``self.scores[q] = ...``), no retrieval is taken from the cache (generate would read what no
  retrieve left there) and generate's key holds the whole retrieval, its scores included, and
  retrieve's fingerprint.

The system's identity (the execution cache's) holds every setting and all three fingerprints
(retrieve, generate, count_tokens). It, and the identity of a stage whose code reaches
``oloproof.models`` (it may call a model through ``ModelClient``), also say how replies are read
(``oloproof.models.reading``), so what an earlier reading made is made again.
"""

from __future__ import annotations

import contextvars
import functools
import inspect
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, cast

from pydantic import ValidationError

from ledger import CodecError
from oloproof.config import RagSettings
from oloproof.dataset import Case, own_copy
from oloproof.errors import ArtifactError, ConfigError
from oloproof.events import identity_key, kept_apart
from oloproof.fingerprint import Fingerprint, of_method
from oloproof.models import reading, recording_model_calls
from oloproof.relevance import first_relevant, relevant_units
from oloproof.sdk import (
    Context,
    ContextItem,
    DroppedItem,
    Passage,
    RagInfo,
    Retrieval,
    TokenCount,
    validate_artifact,
)
from oloproof.systems.base import (
    ExecContext,
    Execution,
    StageRecord,
    case_output,
    declared_apart,
    load_object,
    unrecordable,
)
from oloproof.systems.context_use import ignores_context, reads_only_items, written
from oloproof.systems.rerank import built_badly, drawn, lazy, reordered
from oloproof.systems.threads import CallPool
from oloproof.usercode import describe, received

NOT_RETRIEVED = "not_retrieved"
BELOW_TOP_K = "below_top_k"
UNLABELLED = "unlabelled"
# Interventions that replay the retrieval a run recorded instead of calling retrieve.
REPLAYED = ("top-k", "reranker", "token-budget", "replay-control")


class RetrievalDriftError(Exception):
    """Under a replay, the retrieve that ran for the state generate reads of it returned
    another retrieval than the one replayed. Not an ``OloproofError``, which stops a run: the
    retriever changed under one case (a file it reads, a service it asks), so that case errors
    and the run goes on."""


def assemble_context(
    retrieval: Retrieval,
    *,
    top_k: int,
    token_budget: int | None,
    count_tokens: Callable[[Passage], int] | None,
) -> Context:
    """Keep the first ``top_k`` candidates that fit ``token_budget``, in the given order."""
    items: list[ContextItem] = []
    dropped: list[DroppedItem] = []
    used = 0
    for position, passage in enumerate(retrieval.candidates, start=1):
        if position > top_k:
            dropped.append(
                DroppedItem(
                    doc_id=passage.doc_id,
                    chunk_id=passage.chunk_id,
                    position=position,
                    reason="top_k",
                )
            )
            continue
        tokens = _counted(count_tokens, passage)
        if token_budget is not None and tokens is not None and used + tokens > token_budget:
            dropped.append(
                DroppedItem(
                    doc_id=passage.doc_id,
                    chunk_id=passage.chunk_id,
                    position=position,
                    tokens=tokens,
                    reason="token_budget",
                )
            )
            continue
        used += tokens or 0
        items.append(
            ContextItem(
                doc_id=passage.doc_id,
                chunk_id=passage.chunk_id,
                position=position,
                tokens=tokens,
                text=passage.text,
            )
        )
    return Context(items=tuple(items), dropped=tuple(dropped), token_budget=token_budget)


def _counted(count_tokens: Callable[[Passage], int] | None, passage: Passage) -> int | None:
    """``count_tokens(passage)``, held to a whole number ≥ 0 (``TokenCount``); None without it."""
    if count_tokens is None:
        return None
    return TokenCount(tokens=count_tokens(passage)).tokens


def gold_context(case: Case, count_tokens: Callable[[Passage], int] | None) -> Context:
    """The case's ``expected.gold_context`` as the whole context (no budget applies)."""
    items = []
    for entry in case.expected.get("gold_context", []):
        passage = Passage(
            doc_id=entry["doc_id"], chunk_id=entry.get("chunk_id"), text=entry["text"]
        )
        tokens = _counted(count_tokens, passage)
        items.append(
            ContextItem(
                doc_id=passage.doc_id, chunk_id=passage.chunk_id, tokens=tokens, text=passage.text
            )
        )
    return Context(items=tuple(items), source="gold")


def relevant_position(
    retrieval: Mapping[str, Any] | None, expected: Mapping[str, Any], top_k: int, unit: str
) -> str:
    """Where the best relevant passage sits, its relevance read as ``unit`` (the retrieval
    metrics' reading): ``1``…``top_k``, below_top_k or not_retrieved."""
    relevant = relevant_units(expected, unit)
    if not relevant:
        return UNLABELLED
    position = first_relevant((retrieval or {}).get("candidates", []), relevant, unit)
    if position is None:
        return NOT_RETRIEVED
    return str(position) if position <= top_k else BELOW_TOP_K


def staged_labels(
    artifacts: Mapping[str, Sequence[Any]] | None,
    expected: Mapping[str, Any],
    top_k: int,
    unit: str | None,
) -> dict[str, str]:
    """The staged slices of one case from the artifacts its execution recorded (None: the
    system raised, and there are none): context_truncated, and relevant_position with
    relevance read as ``unit`` (none when the run's retrieval metrics disagree on it).

    A run labels each case so as it executes it; ``verify`` derives the labels again from the
    stored execution the same way.
    """
    if artifacts is None:
        return {}
    retrievals = artifacts.get("retrieval/v1")
    retrieval = retrievals[-1] if retrievals else None
    context = (artifacts.get("context/v1") or [{}])[-1]
    truncated = any(d["reason"] == "token_budget" for d in context.get("dropped", []))
    labels = {"context_truncated": "true" if truncated else "false"}
    if unit is not None:
        labels["relevant_position"] = relevant_position(retrieval, expected, top_k, unit)
    return labels


# The fields of a context that say how it was made rather than what it holds.
_CONTEXT_MAKING = ("token_budget", "dropped", "source")


class RagSystem:
    """Runs a ``@rag_system`` class stage by stage, with a cache per stage."""

    kind = "rag"

    def __init__(
        self,
        *,
        name: str,
        version: str,
        settings: RagSettings,
        base_dir: Path,
        where: str,
        construct: bool = True,
    ) -> None:
        cls = load_object(settings.object, base_dir=base_dir, key="system.rag.object", where=where)
        info: RagInfo | None = getattr(cls, "__oloproof_rag__", None)
        if not isinstance(cls, type) or info is None:
            raise ConfigError(
                f"{where}: system.rag.object: {settings.object!r} is not a class decorated "
                "with @rag_system"
            )
        for method in ("retrieve", "generate"):
            if not callable(getattr(cls, method, None)):
                raise ConfigError(
                    f"{where}: system.rag.object: {settings.object} has no {method}()"
                )
        self.depth = settings.depth or info.depth
        self.top_k = settings.top_k or info.top_k
        self.token_budget = settings.token_budget or info.token_budget
        self.index_version = settings.index_version or info.index_version
        if self.token_budget is not None and not callable(getattr(cls, "count_tokens", None)):
            raise ConfigError(
                f"{where}: system.rag: a token_budget needs {settings.object}.count_tokens"
                "(passage); Oloproof never estimates tokens"
            )
        # Without ``construct`` the class is described but not built: a run on Ray builds it
        # on each replica (where its model is loaded), never in the driver.
        self._obj: Any = self._construct(cls, settings, where) if construct else cls
        self._pool = CallPool("oloproof-rag")
        count = getattr(self._obj, "count_tokens", None)
        self._count_tokens: Callable[[Passage], int] | None = count if callable(count) else None
        # Computed once, here: a run fingerprints its stages once, never per case.
        self._fingerprints: dict[str, Fingerprint] = {
            method: of_method(cls, method, base_dir=base_dir)
            for method in ("retrieve", "generate", "count_tokens")
            if method != "count_tokens" or self._count_tokens is not None
        }
        # How model replies are read, for each stage whose code may call a model.
        self._readings = {method: reading([fp]) for method, fp in self._fingerprints.items()}
        # What of the context beyond its kept passages generate can read: its cache key holds
        # those too, or an answer made from an older budget would be served for a new one.
        # Every one unless its code reads only the kept passages; then those its code names.
        names = self._fingerprints["generate"].names
        whole = not reads_only_items(cls, names)
        self._generate_reads = tuple(f for f in _CONTEXT_MAKING if whole or f in names)
        # Whether generate can read its context at all: one that never does answers from
        # something else (what retrieve left behind), and a diagnosis that hands it gold
        # passages or another cut would label a failure it never showed the model.
        self.reads_context = not ignores_context(cls, names)
        # Whether generate reads state that retrieve's code changes (``self.scores[q] = ...``):
        # a retrieval from the cache runs no retrieve, and generate would then read what an
        # earlier case left there, or nothing. Such a system retrieves for every case it
        # executes, and generate's key holds the whole retrieval, its scores included.
        self._coupled = bool(written(self._fingerprints["retrieve"].functions) & names)
        self.version = version
        # The decorator's name and version, when oloproof.yaml gives others: in each stage's
        # key too, or bumping the decorator's version after a change no fingerprint sees (the
        # index file) would execute every case again from stages cached before it.
        self._declared = declared_apart((info.name, info.version), name, version)
        self._identity = {
            "kind": self.kind,
            "name": name,
            "version": version,
            "object": settings.object,
            "depth": self.depth,
            "top_k": self.top_k,
            "token_budget": self.token_budget,
            "index_version": self.index_version,
            "code": {method: fp.key for method, fp in self._fingerprints.items()},
            **reading(self._fingerprints.values()),
            **self._declared,
        }

    reuses_executions = True

    @staticmethod
    def _construct(cls: type, settings: RagSettings, where: str) -> Any:
        try:
            return cls()
        except BaseException as exc:  # the user's constructor failed or exited: report it
            if isinstance(exc, KeyboardInterrupt) and received():
                raise  # a real Ctrl-C while it ran
            raise ConfigError(
                f"{where}: system.rag.object: {settings.object}() failed: {describe(exc)}"
            ) from None

    def identity(self) -> dict[str, Any]:
        return self._identity

    def fingerprints(self) -> dict[str, dict[str, Any]]:
        return {method: fp.record() for method, fp in self._fingerprints.items()}

    def retrieve_identity(self, case: Case) -> str:
        """The retrieve stage's cache key for one case."""
        return identity_key(
            {
                "stage": "retrieve",
                "version": self.version,
                "index_version": self.index_version,
                "depth": self.depth,
                # As stored, each secret kept out: the key is stored, and must not let a guess
                # at one be checked against it (and so apart by case where one was).
                "input": kept_apart(case.id, case.input),
                "code": self._fingerprints["retrieve"].key,
                **self._readings["retrieve"],
                **self._declared,
            }
        )

    async def _call(self, fn: Callable[..., Any], *args: Any) -> Any:
        if inspect.iscoroutinefunction(fn):
            return await fn(*args)
        context = contextvars.copy_context()
        return await self._pool.call(context.run, fn, *args)

    async def _measured(self, make: Callable[..., Context], *args: Any) -> Context:
        """``make(*args)``, a context whose making calls ``count_tokens``: user code, so it runs
        on a thread as the stages do, and one that hangs costs its case's timeout instead of
        blocking the event loop (and with it every case, the timeouts and Ctrl-C)."""
        if self._count_tokens is None:
            return make(*args)
        return cast(Context, await self._call(make, *args))

    @property
    def counts_tokens(self) -> bool:
        """Whether the system measures passages (``count_tokens``), so a budget can apply."""
        return self._count_tokens is not None

    async def execute(self, case: Case, ctx: ExecContext) -> Execution:
        intervention = ctx.intervention or {}
        kind = intervention.get("kind")
        stages: list[StageRecord] = []
        artifacts: dict[str, list[dict[str, Any]]] = {}
        top_k = int(intervention.get("top_k", self.top_k))
        budget = intervention["token_budget"] if kind == "token-budget" else self.token_budget
        # The retrieval generate may read the state of (``_coupled``): the one retrieve
        # returned as it left that state, whether or not the context was made from it.
        made_from: dict[str, Any] | None = None
        if kind == "gold-context":
            if self._coupled:
                made_from = await self._retrieved_for_state(case, ctx, stages, None)
            context = await self._measured(gold_context, case, self._count_tokens)
        else:
            assemble = functools.partial(
                assemble_context, top_k=top_k, token_budget=budget, count_tokens=self._count_tokens
            )
            dumped = None
            made: Context | None = None
            if kind in REPLAYED:
                retrieval = Retrieval.model_validate(ctx.replay["retrievals"][case.id])
                if self._coupled:
                    made_from = await self._retrieved_for_state(case, ctx, stages, retrieval)
            else:
                retrieval, dumped, made = await self._retrieve(case, ctx, stages, assemble)
                made_from = dumped if self._coupled else None
            # The retrieval the stage stored, as the very same map: storing the execution
            # then sees at once that it is the stage's (``stored_form``).
            recorded = [
                dumped
                if dumped is not None
                else retrieval.model_dump(mode="json", exclude_none=True)
            ]
            ranked = retrieval
            if kind == "reranker":
                ranked = await self._rerank(ctx.replay["reranker"], case, retrieval)
                # The reranked order goes after the one it started from: evaluators read the
                # last retrieval, so every retrieval metric scores the intervention's ranking.
                recorded.append(ranked.model_dump(mode="json", exclude_none=True))
            artifacts["retrieval/v1"] = recorded
            context = made if made is not None else await self._measured(assemble, ranked)
        artifacts["context/v1"] = [context.model_dump(mode="json", exclude_none=True)]
        output, calls = await self._generate(case, context, ctx, stages, made_from)
        if calls:
            artifacts["model_call/v1"] = calls
        cited = output.get("citations") if isinstance(output, dict) else None
        if cited is not None:
            artifacts["citations/v1"] = [_citations(case, cited)]
        return Execution(output=output, artifacts=artifacts, stages=stages)

    async def _retrieve(
        self,
        case: Case,
        ctx: ExecContext,
        stages: list[StageRecord],
        assemble: Callable[[Retrieval], Context] | None,
    ) -> tuple[Retrieval, dict[str, Any] | None, Context | None]:
        """The retrieval, the map a new stage output stored it as (None from the cache), and
        its context when the retrieve call's thread assembled it too (None: still to make, or
        no ``assemble`` given).

        A sync ``retrieve`` that is called (not found in the cache) hands its retrieval to
        ``assemble`` on the same thread: one hop to a thread a case instead of two, which
        measured 5 to 10% of a staged case. What assembling raises (``count_tokens`` failed)
        fails the case before the retrieval is stored: a later run retrieves it again.
        """
        identity = self.retrieve_identity(case)
        reuse = ctx.use_stage_cache and not self._coupled
        cached = await ctx.stage_cache.lookup(identity) if reuse else None
        if cached is not None:
            # Checked as a fresh one is: an earlier release stored retrievals longer than
            # their depth, and the outcome must not hang on whether the cache holds one.
            retrieval = self._checked(case, cached["retrieval"])
            stages.append(StageRecord("retrieve", identity, cached["address"], True))
            return retrieval, None, None
        retrieve = self._obj.retrieve
        context: Context | None = None
        if inspect.iscoroutinefunction(retrieve):
            retrieval = self._checked(case, await retrieve(own_copy(case.input), self.depth))
        else:
            retrieval, context = await self._call(self._retrieved, retrieve, case, assemble)
        stored = retrieval.model_dump(mode="json", exclude_none=True)
        address = ctx.stage_cache.record("retrieve", identity, {"retrieval": stored})
        stages.append(StageRecord("retrieve", identity, address, False))
        return retrieval, stored, context

    def _retrieved(
        self,
        retrieve: Callable[..., Any],
        case: Case,
        assemble: Callable[[Retrieval], Context] | None,
    ) -> tuple[Retrieval, Context | None]:
        """On a stage thread: ``retrieve``, its result checked, and its context."""
        retrieval = self._checked(case, retrieve(own_copy(case.input), self.depth))
        return retrieval, assemble(retrieval) if assemble is not None else None

    async def _retrieved_for_state(
        self, case: Case, ctx: ExecContext, stages: list[StageRecord], replayed: Retrieval | None
    ) -> dict[str, Any]:
        """Call retrieve where the intervention gives generate a context from elsewhere (the
        gold passages, or the ``replayed`` retrieval), for the state it leaves that generate
        reads: without it, generate would read nothing, or what another case left there. Its
        retrieval is stored as the stage it is, and is not the context. A replay's must be the
        very one replayed, or generate would read another retrieval's state: that case errors.
        """
        retrieval, stored, _ = await self._retrieve(case, ctx, stages, None)
        if replayed is not None and retrieval != replayed:
            raise RetrievalDriftError(
                "retrieve() returned another retrieval than the one this run replays (the run "
                "recorded it), so the state generate reads of it would not be the replayed "
                "retrieval's; the case is not observed"
            )
        assert stored is not None, "a system whose generate reads retrieve's state never reuses"
        return stored

    def _checked(self, case: Case, result: Any) -> Retrieval:
        # A Retrieval is validated again from its values: one built past validation
        # (``model_construct``, ``model_copy(update=...)``) may hold a NaN score or mappings for
        # passages, and a subclass fields retrieval/v1 has not, which would be recorded as if
        # they were one and fail every replay reading them back. So it counts as the mapping
        # of the same values would.
        if isinstance(result, Retrieval):
            result = result.model_dump(warnings=False)
        try:
            retrieval = Retrieval.model_validate(result)
        except ValidationError as exc:
            raise ArtifactError(
                f"case {case.id!r}: retrieve() returned a malformed retrieval/v1: "
                f"{exc.errors()[0]['msg']}"
            ) from None
        # The run records its depth as the most candidates a retrieval holds, and a replay's
        # cut is checked against it: a longer retrieval would make both claims false.
        found = len(retrieval.candidates)
        if found > self.depth:
            raise ArtifactError(
                f"case {case.id!r}: retrieve() returned a malformed retrieval/v1: {found} "
                f"candidates at depth {self.depth}; retrieve(input, depth) returns up to depth "
                "candidates"
            )
        return retrieval

    async def _rerank(
        self, function: Callable[..., Any], case: Case, retrieval: Retrieval
    ) -> Retrieval:
        """The reranker's order, when it is one of the candidates (``rerank.reordered``); a
        reranker that returns anything else errors the case."""
        # Copies: a passage changed in place cannot change the candidates it is checked against.
        given = [passage.model_copy() for passage in retrieval.candidates]
        try:
            ranked = await self._call(function, own_copy(case.input), given)
            if lazy(ranked):  # reading it runs the reranker's code: on a thread, as the call did
                ranked = await self._call(drawn, ranked, len(given))
        except ValidationError as exc:
            error = built_badly(exc)
            if error is None:
                raise
            raise error from exc
        candidates = reordered(retrieval.candidates, ranked)
        return Retrieval(query=retrieval.query, depth=retrieval.depth, candidates=candidates)

    def _state_left(self, retrieval: dict[str, Any]) -> dict[str, Any]:
        """What generate's key holds of the state retrieve leaves behind for it: the whole
        retrieval, and retrieve's code, which may leave other state behind (``self.mode =
        "B"``) with the same passages returned."""
        return {"retrieval": retrieval, "retrieve_code": self._fingerprints["retrieve"].key}

    def _context_read(self, context: Context) -> dict[str, Any]:
        """The fields of ``context`` beyond its kept passages that generate's code reads by
        name, for its cache key (none for most: the key then stays as it always was)."""
        if not self._generate_reads:
            return {}
        made = context.model_dump(mode="json", exclude_none=True, include=set(self._generate_reads))
        return {"made": made}

    async def _generate(
        self,
        case: Case,
        context: Context,
        ctx: ExecContext,
        stages: list[StageRecord],
        retrieval: dict[str, Any] | None,
    ) -> tuple[Any, list[dict[str, Any]]]:
        """The output of generate, from the cache or made now; ``retrieval``: the one the
        context was made from, when generate reads what retrieve leaves behind (else None)."""
        identity = identity_key(
            {
                "stage": "generate",
                "input": kept_apart(case.id, case.input),  # as retrieve's key has it
                # What generate is given: the kept passages. The budget and the dropped passages
                # are how the context was made, not what the model sees.
                "context": kept_apart(
                    case.id, [i.model_dump(mode="json", exclude_none=True) for i in context.items]
                ),
                "version": self.version,
                "code": self._fingerprints["generate"].key,
                **self._readings["generate"],
                **self._declared,
                **self._context_read(context),
                **(self._state_left(retrieval) if retrieval is not None else {}),
            }
        )
        cached = await ctx.stage_cache.lookup(identity) if ctx.use_stage_cache else None
        if cached is not None:
            stages.append(StageRecord("generate", identity, cached["address"], True))
            return cached["output"], list(cached.get("model_calls", []))
        # Model calls generate makes through oloproof.models.ModelClient are kept with its output.
        with recording_model_calls() as calls:
            output = await self._call(self._obj.generate, own_copy(case.input), context)
        body: dict[str, Any] = {"output": case_output(case, output)}
        if calls:
            body["model_calls"] = calls
        try:
            address = ctx.stage_cache.record("generate", identity, body)
        except CodecError as exc:  # a NaN: stops the run, as a callable system's output does
            raise unrecordable(case, exc) from None
        stages.append(StageRecord("generate", identity, address, False))
        return output, calls

    def labels(
        self, case: Case, execution: Execution | None, *, unit: str | None
    ) -> dict[str, str]:
        """The staged slices of one case (``staged_labels``)."""
        artifacts = execution.artifacts if execution is not None else None
        return staged_labels(artifacts, case.expected, self.top_k, unit)

    async def aclose(self) -> None:
        self._pool.close()


def _citations(case: Case, cited: Any) -> dict[str, Any]:
    try:
        return validate_artifact("citations/v1", cited)
    except ArtifactError as exc:
        raise ArtifactError(f"case {case.id!r}: output citations: {exc.message}") from None
