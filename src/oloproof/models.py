"""Calling a model from a system: the client model systems use, for your code too.

    from oloproof.models import ModelClient

    client = ModelClient(provider="openai", model="gpt-4o-mini")
    text = client.complete("Answer from these notes: ...")        # in sync code
    reply = await client.acomplete("...", system="Be brief.")     # in async code

The client speaks the judges' protocols with the judges' settings (``ProviderSettings``: the
provider, model, ``server`` profile, ``base_url``, ``api_key_env``, limits, ``extra_body``,
prices), so a staged system's ``generate`` reaches a real model in one line. Each call is
recorded as a ``model_call/v1`` artifact of the case being executed: its tokens, its cost when
both prices are set, the reply's ids, and the blake3 key of the exact request. A model system
records its own call the same way.

The key is read from ``api_key_env`` at call time and goes only into the request header
(``oloproof.providers``): ``ModelClient`` is the one place a model system's key is read.
A failed call raises ``ProviderError`` (the case is then errored, with that sentence), and so
does a reply whose text is not the model's whole answer (cut at the token limit, refused, a
tool call, several choices: ``HttpProvider.answer``), which would otherwise be judged and cached
as one. A call that got a reply all the same (not whole, or beside the server's error) is
recorded before it raises: its tokens were spent, and the errored execution keeps its record.

How replies are read is ``REPLIES``; the identity of every system (and stage) whose code may
call a model through this module holds it (``reading``), so what an earlier reading cached is
made again rather than served.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from oloproof.errors import ConfigError
from oloproof.judge_config import WRITTEN, ProviderSettings

if TYPE_CHECKING:  # httpx loads only when a client is made: system adapters import this module
    from oloproof.fingerprint import Fingerprint
    from oloproof.providers import Completion, HttpProvider

__all__ = ["REPLIES", "ModelClient", "ModelReply", "reading", "recording_model_calls"]

# How replies are read into an answer, counted up when that changes what counts as one: the
# executions an earlier reading stored (a reply cut at the token limit, taken whole before 2;
# one beside the server's error, or beside a tool call its finish reason did not name, before
# 3; one cut where the model's context ends, finish_reason model_length, before 4; one that
# does not say why it ended, that vLLM aborted, cut in another API's words (Gemini's
# MAX_TOKENS), or that says it is not the model's reply (a "user" role, Anthropic's "type":
# "error"), before 5; one under a 2xx that says its body is no finished answer, a 202 or a
# 206, before 6) are then made again rather than served from the cache.
REPLIES = 6

# The modules through which code reaches ModelClient: this one, or the package that exports it
# (``oloproof.ModelClient``, ``from oloproof import ...`` inside a function).
_CALLERS = frozenset({__name__, "oloproof"})


def reading(fingerprints: Iterable[Fingerprint]) -> dict[str, int]:
    """``{"replies": REPLIES}`` for the identity of code any of whose ``fingerprints`` reaches
    ``ModelClient`` (it may call a model, and what it made depends on how the reply was read),
    else nothing: the identity of code that calls no model stays what it was."""
    if any(fingerprint.tools & _CALLERS for fingerprint in fingerprints):
        return {"replies": REPLIES}
    return {}


_CALLS: contextvars.ContextVar[list[dict[str, Any]] | None] = contextvars.ContextVar(
    "oloproof_model_calls", default=None
)


@contextlib.contextmanager
def recording_model_calls() -> Iterator[list[dict[str, Any]]]:
    """Collect the ``model_call/v1`` records of the calls made inside the block; on the way out
    they are the enclosing block's too (the engine's, around a system's own).

    The list is shared by copies of the context (a thread pool's worker sees it too).
    """
    calls: list[dict[str, Any]] = []
    outer = _CALLS.get()
    token = _CALLS.set(calls)
    try:
        yield calls
    finally:
        _CALLS.reset(token)
        if outer is not None:
            outer.extend(calls)


@dataclass(frozen=True)
class ModelReply:
    """A model's reply: its text, the ``model_call/v1`` record, the provider's completion."""

    text: str
    call: dict[str, Any]
    completion: Completion


class ModelClient:
    """A model reached through one provider's protocol; ``settings`` or the same keys."""

    def __init__(self, settings: ProviderSettings | None = None, **keys: Any) -> None:
        if settings is None:
            try:
                # The caller's own settings, checked as oloproof.yaml's are (one price alone, a
                # price per million, an endpoint given whole): not a run's record of them.
                settings = ProviderSettings.model_validate(keys, context={WRITTEN: True})
            except ValidationError as exc:
                err = exc.errors()[0]
                where = ".".join(str(part) for part in err["loc"]) or "settings"
                said = err["msg"].removeprefix("Value error, ")
                raise ConfigError(f"ModelClient: {where}: {said}") from None
        from oloproof.providers import make_provider

        self.settings = settings
        self.provider: HttpProvider = make_provider(settings)

    def fingerprinted_as(self) -> ProviderSettings:
        """What a code fingerprint reads of a client the code holds (``oloproof.fingerprint``):
        its settings, which every request it sends is made of; its provider is made from them."""
        return self.settings

    def request_key(self, prompt: str, system: str = "") -> str:
        """The blake3 key of the exact request a call with ``prompt`` and ``system`` sends, with
        the secrets the run keeps out replaced: it is stored, and must not let a guess at one be
        checked against it."""
        from oloproof.events import identity_key
        from oloproof.redaction import kept_out_all

        body = self.provider.payload(system, prompt)
        return identity_key(kept_out_all({"url": self.provider.url, "body": body}))

    async def acomplete(self, prompt: str, *, system: str = "") -> ModelReply:
        """Ask the model; record the call on the case being executed (if one is), a call
        that then raises ``ProviderError`` on a reply it got too."""
        from oloproof.providers import ProviderError

        key = self.request_key(prompt, system)
        try:
            completion = self.provider.answer(await self.provider.complete(system, prompt))
        except ProviderError as exc:
            if exc.completion is not None:  # a reply came, and used tokens: it is counted
                self._note(self._record(exc.completion, key))
            raise
        call = self._note(self._record(completion, key))
        return ModelReply(completion.text, call, completion)

    def complete(self, prompt: str, *, system: str = "") -> str:
        """``acomplete`` for sync code (a sync ``generate``, say): the reply's text."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(self.acomplete(prompt, system=system)).text
        raise RuntimeError(
            "ModelClient.complete() was called inside async code: use "
            "`await client.acomplete(...)` there"
        )

    @staticmethod
    def _note(call: dict[str, Any]) -> dict[str, Any]:
        recorded = _CALLS.get()
        if recorded is not None:
            recorded.append(call)
        return call

    def _record(self, completion: Completion, request_key: str) -> dict[str, Any]:
        usage = completion.usage
        settings = self.settings
        cost = None
        prices = (settings.price_per_input_token, settings.price_per_output_token)
        known = usage.input_tokens is not None and usage.output_tokens is not None
        if prices[0] is not None and prices[1] is not None and known:
            cost = (usage.input_tokens or 0) * prices[0] + (usage.output_tokens or 0) * prices[1]
        record: Mapping[str, Any] = {
            "provider": settings.provider,
            "model": settings.model,
            "request_key": request_key,
            "input_tokens": usage.input_tokens,
            "output_tokens": usage.output_tokens,
            "cost": cost,
            "reply_id": completion.reply_id,
            "reply_model": completion.model,
            "system_fingerprint": completion.fingerprint,
            "finish_reason": completion.finish_reason,
            "attempts": max(1, completion.attempts),
        }
        return {key: value for key, value in record.items() if value is not None}
