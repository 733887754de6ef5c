"""A staged RAG system: Oloproof calls ``retrieve``, assembles the context, calls ``generate``.

Context assembly (recorded as ``context/v1`` with ``source: retrieval``), in the retriever's
order and never re-ranked: a candidate past position ``top_k`` is dropped with reason ``top_k``
(its tokens are not counted); otherwise, with a ``token_budget``, a candidate whose
``count_tokens`` would take the total past the budget is dropped with reason ``token_budget``
and the next ones are still tried; the rest are kept.

Stage identities (each stage output is an ``oloproof.stage`` event found by identity):

- retrieve: index_version, depth, the case input, and the source of every class from the
  system's own class down to the one that defines ``retrieve``. top_k and token_budget are
  outside it, so changing them reuses every retrieval.
- generate: the case input, the exact passages assembled into the context (not the budget or
  the dropped ones, which the model never sees), the system's name and version, and
  the source of every class from the system's class down to the one that defines ``generate``.
"""

from __future__ import annotations

import contextvars
import inspect
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from oloproof.config import RagSettings
from oloproof.dataset import Case
from oloproof.errors import ArtifactError, ConfigError
from oloproof.events import identity_key
from oloproof.sdk import (
    Context,
    ContextItem,
    DroppedItem,
    Passage,
    RagInfo,
    Retrieval,
    validate_artifact,
)
from oloproof.systems.base import (
    ExecContext,
    Execution,
    StageRecord,
    UnrecordableOutput,
    load_object,
    plain_output,
)
from oloproof.systems.threads import CallPool
from oloproof.usercode import describe, received

NOT_RETRIEVED = "not_retrieved"
BELOW_TOP_K = "below_top_k"
UNLABELLED = "unlabelled"


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
        tokens = count_tokens(passage) if count_tokens is not None else None
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


def gold_context(case: Case, count_tokens: Callable[[Passage], int] | None) -> Context:
    """The case's ``expected.gold_context`` as the whole context (no budget applies)."""
    items = []
    for entry in case.expected.get("gold_context", []):
        passage = Passage(
            doc_id=entry["doc_id"], chunk_id=entry.get("chunk_id"), text=entry["text"]
        )
        tokens = count_tokens(passage) if count_tokens is not None else None
        items.append(
            ContextItem(
                doc_id=passage.doc_id, chunk_id=passage.chunk_id, tokens=tokens, text=passage.text
            )
        )
    return Context(items=tuple(items), source="gold")


def relevant_position(
    retrieval: Mapping[str, Any] | None, expected: Mapping[str, Any], top_k: int
) -> str:
    """Where the best relevant document sits: ``1``…``top_k``, below_top_k or not_retrieved."""
    relevant = {r["doc_id"] for r in expected.get("relevant", []) if r.get("grade", 1) > 0}
    if not relevant:
        return UNLABELLED
    for position, candidate in enumerate((retrieval or {}).get("candidates", []), start=1):
        if candidate["doc_id"] in relevant:
            return str(position) if position <= top_k else BELOW_TOP_K
    return NOT_RETRIEVED


def _mro_sources(cls: type, method: str) -> list[str]:
    """Source of each class from ``cls`` down to the one that defines ``method``."""
    sources = []
    for klass in cls.__mro__:
        try:
            sources.append(inspect.getsource(klass))
        except (OSError, TypeError):
            sources.append(f"{klass.__module__}.{klass.__qualname__}")
        if method in vars(klass):
            break
    return sources


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
        try:
            self._obj = cls()
        except BaseException as exc:  # the user's constructor failed or exited: report it
            if isinstance(exc, KeyboardInterrupt) and received():
                raise  # a real Ctrl-C while it ran
            raise ConfigError(
                f"{where}: system.rag.object: {settings.object}() failed: {describe(exc)}"
            ) from None
        self._pool = CallPool("oloproof-rag")
        count = getattr(self._obj, "count_tokens", None)
        self._count_tokens: Callable[[Passage], int] | None = count if callable(count) else None
        self._retrieve_code = identity_key(_mro_sources(cls, "retrieve"))
        self._generate_code = identity_key(_mro_sources(cls, "generate"))
        self._identity = {
            "kind": self.kind,
            "name": name,
            "version": version,
            "object": settings.object,
            "depth": self.depth,
            "top_k": self.top_k,
            "token_budget": self.token_budget,
            "index_version": self.index_version,
            "retrieve_code": self._retrieve_code,
            "generate_code": self._generate_code,
        }

    def identity(self) -> dict[str, Any]:
        return self._identity

    async def _call(self, fn: Callable[..., Any], *args: Any) -> Any:
        if inspect.iscoroutinefunction(fn):
            return await fn(*args)
        context = contextvars.copy_context()
        return await self._pool.call(context.run, fn, *args)

    async def execute(self, case: Case, ctx: ExecContext) -> Execution:
        intervention = ctx.intervention or {}
        kind = intervention.get("kind")
        stages: list[StageRecord] = []
        artifacts: dict[str, list[dict[str, Any]]] = {}
        top_k = int(intervention.get("top_k", self.top_k))
        if kind == "gold-context":
            context = gold_context(case, self._count_tokens)
        else:
            if kind in ("top-k", "reranker", "replay-control"):
                retrieval = Retrieval.model_validate(ctx.replay["retrievals"][case.id])
            else:
                retrieval = await self._retrieve(case, ctx, stages)
            artifacts["retrieval/v1"] = [retrieval.model_dump(mode="json", exclude_none=True)]
            ranked = retrieval
            if kind == "reranker":
                ranked = await self._rerank(ctx.replay["reranker"], case, retrieval)
            context = assemble_context(
                ranked,
                top_k=top_k,
                token_budget=self.token_budget,
                count_tokens=self._count_tokens,
            )
        artifacts["context/v1"] = [context.model_dump(mode="json", exclude_none=True)]
        output = await self._generate(case, context, ctx, stages)
        cited = output.get("citations") if isinstance(output, dict) else None
        if cited is not None:
            artifacts["citations/v1"] = [_citations(case, cited)]
        return Execution(output=output, artifacts=artifacts, stages=stages)

    async def _retrieve(self, case: Case, ctx: ExecContext, stages: list[StageRecord]) -> Retrieval:
        identity = identity_key(
            {
                "stage": "retrieve",
                "index_version": self.index_version,
                "depth": self.depth,
                "input": case.input,
                "code": self._retrieve_code,
            }
        )
        cached = ctx.stage_cache.lookup(identity) if ctx.use_stage_cache else None
        if cached is not None:
            retrieval = Retrieval.model_validate(cached["retrieval"])
            stages.append(StageRecord("retrieve", identity, cached["address"], True))
            return retrieval
        result = await self._call(self._obj.retrieve, case.input, self.depth)
        try:
            retrieval = (
                result if isinstance(result, Retrieval) else Retrieval.model_validate(result)
            )
        except ValidationError as exc:
            raise ArtifactError(
                f"case {case.id!r}: retrieve() returned a malformed retrieval/v1: "
                f"{exc.errors()[0]['msg']}"
            ) from None
        stored = retrieval.model_dump(mode="json", exclude_none=True)
        address = ctx.stage_cache.record("retrieve", identity, {"retrieval": stored})
        stages.append(StageRecord("retrieve", identity, address, False))
        return retrieval

    async def _rerank(
        self, function: Callable[..., Any], case: Case, retrieval: Retrieval
    ) -> Retrieval:
        ranked = await self._call(function, case.input, list(retrieval.candidates))
        try:
            return Retrieval(query=retrieval.query, depth=retrieval.depth, candidates=tuple(ranked))
        except ValidationError as exc:
            raise ArtifactError(
                f"case {case.id!r}: the reranker returned something other than passages: "
                f"{exc.errors()[0]['msg']}"
            ) from None

    async def _generate(
        self, case: Case, context: Context, ctx: ExecContext, stages: list[StageRecord]
    ) -> Any:
        identity = identity_key(
            {
                "stage": "generate",
                "input": case.input,
                # What generate is given: the kept passages. The budget and the dropped passages
                # are how the context was made, not what the model sees.
                "context": [i.model_dump(mode="json", exclude_none=True) for i in context.items],
                "system": [self._identity["name"], self._identity["version"]],
                "code": self._generate_code,
            }
        )
        cached = ctx.stage_cache.lookup(identity) if ctx.use_stage_cache else None
        if cached is not None:
            stages.append(StageRecord("generate", identity, cached["address"], True))
            return cached["output"]
        output = await self._call(self._obj.generate, case.input, context)
        try:
            output = plain_output(output)
        except UnrecordableOutput as exc:
            raise ArtifactError(f"case {case.id!r}: the output cannot be recorded: {exc}") from None
        address = ctx.stage_cache.record("generate", identity, {"output": output})
        stages.append(StageRecord("generate", identity, address, False))
        return output

    def labels(self, case: Case, execution: Execution | None) -> dict[str, str]:
        """The staged slices of one case: relevant_position and context_truncated."""
        if execution is None:
            return {}
        retrievals = execution.artifacts.get("retrieval/v1")
        retrieval = retrievals[-1] if retrievals else None
        context = (execution.artifacts.get("context/v1") or [{}])[-1]
        truncated = any(d["reason"] == "token_budget" for d in context.get("dropped", []))
        return {
            "relevant_position": relevant_position(retrieval, case.expected, self.top_k),
            "context_truncated": "true" if truncated else "false",
        }

    async def aclose(self) -> None:
        self._pool.close()


def _citations(case: Case, cited: Any) -> dict[str, Any]:
    try:
        return validate_artifact("citations/v1", cited)
    except ArtifactError as exc:
        raise ArtifactError(f"case {case.id!r}: output citations: {exc.message}") from None
