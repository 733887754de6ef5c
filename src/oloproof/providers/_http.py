"""What every provider shares: the reply types, the error, and the HTTP call with retries.

One call is: read the key from its environment variable, POST the protocol's JSON, and on a
timeout (unless ``retry_on_timeout`` is off: a server that keeps computing an abandoned request
only gets busier), a connection error, 408, 409, 429 or a 5xx wait and try again, up to
``max_retries`` more times. The timeout runs from sending the request to the end of the reply,
so time the request spends queued inside the server counts; time spent waiting for one of this
client's own ``concurrency`` slots does not. The wait doubles each try from ``backoff_s`` (at
most ``backoff_max_s``, plus up to a quarter more at random so parallel callers spread out); a
``Retry-After`` (or ``retry-after-ms``) header is honoured instead when it asks for at most
``max_retry_after_s``. Any other status, and
a 2xx whose body is not the protocol's reply, fails at once. So does a 2xx whose status says
its body is not a finished answer (a ``202 Accepted``, a ``206 Partial Content``: only 200, 201
and 203 carry one, ``oloproof.answering_statuses``), whatever the body holds. After the last
try a ``ProviderError`` says what went wrong.

A body is read through ``read_body``: at most ``MAX_BODY_BYTES`` of it, in a coding the client
asked for, within the call's timeout. A 2xx body it does not read whole (larger than that, in
another coding, a gzip stream cut short) is a ``malformed_response``; an error status whose body
it does not read is that status, the body not quoted. The charset a Content-Type names is not
used: the body is JSON, parsed from its bytes (UTF-8, or UTF-16 or -32 told by their pattern as
RFC 4627 did), and quoted in an error as UTF-8. A label Python cannot decode with (``utf-16``
without a byte-order mark, ``zlib``) made the client raise an exception of Python's instead.

A 2xx body is the protocol's reply only in the shape the protocol gives it: a JSON object, no
deeper than the parser can read, with a ``usage`` that is an object when given and token counts
that are whole numbers, and the reply's ``id``, ``model``, ``system_fingerprint`` and finish
reason text when given, and no text holding a lone surrogate escape (``"\\ud83d"``, half an
emoji: no character, so nothing a ledger can store). Anything else (``"usage": [1, 2]``, a
negative count, ``"id": 7``, a body 100,000 brackets deep) is a ``malformed_response`` with the
body, never an exception of the parser's; its message says what is wrong where it can (a body
that is not JSON, a streamed one, one holding the protocol's error object instead of a reply).
So is a reply beside a non-null ``error`` (a proxy passing on what came before an upstream
failure): the server says the text is not what it meant to send; and a body that says it is no
reply of the model's (``said_to_be``: a ``type`` or message ``role`` other than the protocol's).

A reply the protocol reads can still say its text is not the model's whole answer (cut at the
token limit, refused, a tool call, several choices), or fail to say it is (no finish reason:
``unfinished``): ``Completion.incomplete`` says so, and
``HttpProvider.answer`` turns it into an ``incomplete`` ``ProviderError`` where the text would
be taken as an answer; a judge reads no verdict from such a reply (``judge_reply_incomplete``).

The key goes only into the request header. A key no header can carry (a character outside
ASCII, a control character) is refused when the client is made, as a ``ConfigError`` naming its
variable and never its value; one set so after that fails its call (``request``). The key is
registered for redaction when the client is made, so whatever is stored from then on (a
system's output repeating it, before the first call) has it replaced. The key is
never kept on the error, and every text an error carries (its message, the server's reply) has
the key replaced by ``[redacted]`` in case a server echoes it. Errors are raised outside any
``except`` block, so no httpx exception, whose request holds the headers, hangs off them as
``__context__``.

Concurrency: at most ``concurrency`` calls of one provider instance are in flight at once (one
``asyncio.Semaphore`` per event loop); a call gives up its slot while it waits to retry.
Connections: inside ``async with provider:`` calls share one ``httpx.AsyncClient``, which keeps
no connection once its reply is read (a spare reply a server sent would be read as the next
call's); outside it each call opens and closes its own, so nothing is left open if nobody
closes it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import email.utils
import json
import math
import os
import random
import re
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from types import TracebackType
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol, Self, runtime_checkable

from oloproof import redaction
from oloproof.answering_statuses import ANSWERED, meaning
from oloproof.errors import ConfigError
from oloproof.header_text import unsendable
from oloproof.jsonkeys import DuplicateKey, unique_keys
from oloproof.judge_config import MAX_BACKOFF_S
from oloproof.providers._body import ACCEPT_ENCODING, MAX_BODY_BYTES, UnreadableBody, read_body

if TYPE_CHECKING:
    # Imported where a request is made: importing httpx loads its command-line tool too (rich,
    # click), about a tenth of a second that every run without a judge would pay.
    import httpx

ErrorKind = Literal[
    "missing_key",
    "timeout",
    "connection",
    "http_status",
    "malformed_response",
    "request",
    "incomplete",
]

RETRY_STATUSES = frozenset({408, 409, 429})
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_RAW_LIMIT = 4000
_MESSAGE_LIMIT = 300

MAX_TOKEN_COUNT = 2**40
"""The largest token count a reply may report (about 10**12): far beyond any model's context,
and far enough below the ledger's integers (2**64) that a run's totals cannot overflow them."""


@dataclass(frozen=True)
class Usage:
    """Tokens one call used, as the provider reported them (None when it did not).

    ``input_tokens`` counts every token of the prompt, cached or not.
    """

    input_tokens: int | None = None
    output_tokens: int | None = None

    def as_dict(self) -> dict[str, int | None]:
        return {"input_tokens": self.input_tokens, "output_tokens": self.output_tokens}


@dataclass(frozen=True)
class Completion:
    """The model's reply to one call, with what the provider said about it."""

    text: str
    usage: Usage
    reply_id: str | None = None
    fingerprint: str | None = None
    model: str | None = None
    finish_reason: str | None = None
    attempts: int = 1
    incomplete: str | None = None
    """Why the text is not the model's one whole answer, as the reply says (cut at the token
    limit, refused, stopped to call a tool, one of several choices); None when it says none of
    these. A judge reads no verdict from such a reply; ``HttpProvider.answer`` refuses it where
    the text is taken as an answer."""


class ProviderError(Exception):
    """A call that failed after its last try, or could not be made at all.

    ``kind`` says how: ``missing_key`` (the key's environment variable is unset), ``timeout``,
    ``connection``, ``http_status`` (``status`` holds it), ``malformed_response`` (a 2xx whose
    body is not the protocol's reply; ``raw`` holds the body), ``request`` (httpx refused to
    send it) or ``incomplete`` (a reply whose text is not the model's whole answer, refused by
    ``HttpProvider.answer``). The message never contains the key. ``completion`` is the reply
    the call failed on, when the server sent one (beside its error, or not a whole answer), so
    the tokens it used can still be counted.
    """

    def __init__(
        self,
        message: str,
        *,
        kind: ErrorKind,
        attempts: int,
        status: int | None = None,
        raw: str | None = None,
        completion: Completion | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.kind = kind
        self.attempts = attempts
        self.status = status
        self.raw = raw
        self.completion = completion

    def to_detail(self) -> dict[str, Any]:
        """Plain data for a missing verdict's detail."""
        detail: dict[str, Any] = {"error": self.message, "error_kind": self.kind}
        detail["attempts"] = self.attempts
        if self.status is not None:
            detail["status"] = self.status
        if self.raw is not None:
            detail["raw_reply"] = self.raw
        return detail


class MalformedReply(ValueError):
    """A 2xx body that is not the protocol's reply; the message says what is wrong with it,
    and ``completion`` is the reply it held all the same (beside the server's error)."""

    def __init__(self, message: str, completion: Completion | None = None) -> None:
        super().__init__(message)
        self.completion = completion


@dataclass(frozen=True)
class _Reply:
    """What a call got back: the status, the headers, and the body (None when it was not read
    whole, ``unread`` saying why)."""

    status: int
    headers: httpx.Headers
    content: bytes | None
    unread: str = ""

    @property
    def text(self) -> str:
        return "" if self.content is None else self.content.decode("utf-8", "replace")


@runtime_checkable
class Provider(Protocol):
    """Anything that turns instructions and a user message into a model's reply.

    ``schema``, when given, is the JSON Schema the reply must follow; a provider that can have
    the server enforce it does, and one that cannot ignores it.
    """

    async def complete(
        self, system: str, user: str, *, schema: Mapping[str, Any] | None = None
    ) -> Completion: ...


def _redacted(failure: ProviderError) -> ProviderError:
    """``failure`` with the key taken out of its message and of the server's reply it quotes,
    in case a server echoes it; counted, as the failure is stored."""
    raw = None if failure.raw is None else redaction.redact(failure.raw)
    return ProviderError(
        redaction.redact(failure.message),
        kind=failure.kind,
        attempts=failure.attempts,
        status=failure.status,
        raw=raw,
        completion=failure.completion,
    )


def backoff_wait(first_s: float, attempt: int, cap_s: float = MAX_BACKOFF_S) -> float:
    """The wait after try ``attempt`` (from 1) failed: ``first_s`` doubled each try since the
    first, at most ``cap_s``."""
    # Doubled no further than the largest power of two a float holds (2.0 ** 1024 raises
    # OverflowError), which no first wait but 0 comes back from under the cap.
    return min(cap_s, first_s * 2.0 ** min(attempt - 1, 1023))


def retry_after_seconds(headers: httpx.Headers) -> float | None:
    """The wait a response asks for: ``retry-after-ms``, or ``Retry-After`` (seconds or a date)."""
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            return _non_negative(float(millis) / 1000.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return _non_negative(float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, OverflowError):
        # OverflowError: a year past what Python's dates hold (eleven digits), a wait longer
        # than any the client takes; the backoff applies, as for one beyond the cap.
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return _non_negative((when - datetime.now(UTC)).total_seconds())


def _non_negative(seconds: float) -> float | None:
    return max(0.0, seconds) if math.isfinite(seconds) else None


class HttpProvider:
    """The retrying HTTP call; a subclass supplies the protocol (path, headers, body, reply)."""

    name: ClassVar[str]
    protocol: ClassVar[str]

    def __init__(
        self,
        *,
        model: str,
        base_url: str,
        api_key_env: str | None,
        temperature: float | None = None,
        max_tokens: int = 1024,
        max_tokens_field: str = "max_completion_tokens",
        instructions: Literal["system", "user"] = "system",
        structured_output: str = "off",
        extra_body: Mapping[str, Any] | None = None,
        server: str | None = None,
        timeout_s: float = 60.0,
        max_retries: int = 4,
        retry_on_timeout: bool = True,
        concurrency: int = 4,
        backoff_s: float = 0.5,
        backoff_max_s: float = MAX_BACKOFF_S,
        max_retry_after_s: float = 60.0,
    ) -> None:
        if concurrency < 1 or max_retries < 0 or timeout_s <= 0:
            raise ValueError("need concurrency >= 1, max_retries >= 0 and timeout_s > 0")
        self.model = model
        self.base_url = base_url.rstrip("/")
        self.api_key_env = api_key_env
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.max_tokens_field = max_tokens_field
        self.instructions = instructions
        self.structured_output = structured_output
        self.extra_body: dict[str, Any] = dict(extra_body or {})
        self.server = server
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.retry_on_timeout = retry_on_timeout
        self.concurrency = concurrency
        self.backoff_s = backoff_s
        self.backoff_max_s = backoff_max_s
        self.max_retry_after_s = max_retry_after_s
        self._semaphores: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, asyncio.Semaphore
        ] = weakref.WeakKeyDictionary()
        self._client: httpx.AsyncClient | None = None
        self._entered = 0
        key = os.environ.get(api_key_env) if api_key_env is not None else None
        refused = None if key is None else self._refused_key(key)
        if refused is not None:
            # Every call would fail the same way: refused before the first, as bad input.
            raise ConfigError(refused)
        if key:
            # Kept out from now on, not from the first call: a system run before it may repeat
            # the key (in an answer, a passage), and what it made is stored, then judged.
            redaction.register(key)

    # --- what a protocol supplies ------------------------------------------------------------

    @property
    def url(self) -> str:
        raise NotImplementedError

    def auth_headers(self, key: str) -> dict[str, str]:
        raise NotImplementedError

    def extra_headers(self) -> dict[str, str]:
        return {}

    def payload(
        self, system: str, user: str, schema: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        """The request body: the protocol's fields, then ``extra_body`` over them."""
        raise NotImplementedError

    def messages(self, system: str, user: str) -> tuple[str | None, str]:
        """The system text (None when there is none, or it goes in the user turn), the user text."""
        if not system:
            return None, user
        if self.instructions == "user":
            return None, f"{system}\n\n{user}"
        return system, user

    def parse(self, data: dict[str, Any]) -> Completion:
        """The completion in a 2xx body's object; raises ``MalformedReply`` (saying what is
        wrong), or KeyError, TypeError or IndexError for a part that is not there."""
        raise NotImplementedError

    def usage(self, data: Mapping[str, Any]) -> Usage:
        """The token counts a 2xx body's object reports; raises ``MalformedReply`` for counts
        in another shape (``usage_object``, ``token_count``)."""
        raise NotImplementedError

    def unanswered(
        self, why: str, data: Mapping[str, Any], finish_reason: str | None = None
    ) -> MalformedReply:
        """The ``MalformedReply`` of a reply in the protocol's shape that holds no answer (an
        error in its choice, no text past the token limit), carrying what it reports it used:
        those tokens were spent, and the run counts them. It carries nothing when the reply
        reports no count, or one in another shape."""
        try:
            usage = self.usage(data)
            reply_id, model = optional_text(data, "id"), optional_text(data, "model")
        except MalformedReply:
            return MalformedReply(why)
        if usage.input_tokens is None and usage.output_tokens is None:
            return MalformedReply(why)
        spent = Completion(
            text="", usage=usage, reply_id=reply_id, model=model, finish_reason=finish_reason
        )
        return MalformedReply(why, spent)

    # --- the call ----------------------------------------------------------------------------

    async def complete(
        self, system: str, user: str, *, schema: Mapping[str, Any] | None = None
    ) -> Completion:
        """Send one request, retrying as the module says; raise ``ProviderError`` at the end."""
        key = self._read_key()
        headers = {
            "content-type": "application/json",
            "accept": "application/json",
            "accept-encoding": ACCEPT_ENCODING,
        }
        headers.update(self.extra_headers())
        if key is not None:
            headers.update(self.auth_headers(key))
        body = self.payload(system, user, schema)
        failure: ProviderError | None = None
        for attempt in range(1, self.max_retries + 2):
            outcome = await self._attempt(headers, body, attempt)
            if isinstance(outcome, Completion):
                # Redacted here, once, so the run counts what the server echoed of the key.
                return dataclasses.replace(outcome, text=redaction.redact(outcome.text))
            failure, delay = outcome
            if delay is None or attempt > self.max_retries:
                break
            await asyncio.sleep(delay)
        if failure is None:  # unreachable: the loop runs at least once
            raise RuntimeError("no attempt was made")
        raise _redacted(failure)

    def answer(self, completion: Completion) -> Completion:
        """``completion`` when its text is the model's whole answer; a ``ProviderError``
        (``incomplete``) saying what the reply is instead: a cut or refused text recorded as an
        answer would be judged as one, and cached as one."""
        if completion.incomplete is None:
            return completion
        message = (
            f"{self._what()}: {completion.incomplete}, so it is not taken as the model's answer"
        )
        failure = ProviderError(
            message, kind="incomplete", attempts=completion.attempts, completion=completion
        )
        raise _redacted(failure)

    def _read_key(self) -> str | None:
        if self.api_key_env is None:
            return None
        key = os.environ.get(self.api_key_env)
        if not key:
            raise ProviderError(
                f"{self._what()}: the environment variable {self.api_key_env}, which should "
                "hold the key, is not set",
                kind="missing_key",
                attempts=0,
            )
        refused = self._refused_key(key)
        if refused is not None:  # set since the client was made, to a value it cannot send
            raise ProviderError(refused, kind="request", attempts=0)
        redaction.register(key)  # kept out of everything stored or printed
        return key

    def _refused_key(self, key: str) -> str | None:
        """Why ``key`` is not sent (the error, which never holds it), or None."""
        env = self.api_key_env
        held = f"{self._what()}: the environment variable {env}, which should hold the key, holds"
        fault = _key_fault(key)
        if fault is not None:
            return f"{held} {fault}, which an HTTP header cannot carry"
        if 0 < len(key) < redaction.MIN_LENGTH:
            # Registered, it would not be searched for: a server that repeats the key it was
            # sent (an error naming the key it refused) would have it stored and printed.
            return (
                f"{held} fewer than {redaction.MIN_LENGTH} characters, too short to be kept out "
                "of what a run stores and prints (so short a text occurs in ordinary text); give "
                "it a longer value, or api_key_env: null for a server that takes no key"
            )
        return None

    async def _attempt(
        self, headers: dict[str, str], body: dict[str, Any], attempt: int
    ) -> Completion | tuple[ProviderError, float | None]:
        import httpx

        async with self._semaphore():
            try:
                async with asyncio.timeout(self.timeout_s):
                    reply = await self._post(headers, body)
            except (TimeoutError, httpx.TimeoutException):
                message = f"{self._what()}: no reply within {self.timeout_s:g} s"
                if not self.retry_on_timeout:
                    # The server may still be computing the abandoned request: a retry would
                    # only queue behind it.
                    message += " (not retried: retry_on_timeout is off)"
                    return self._error(message, "timeout", attempt), None
                return self._error(message, "timeout", attempt), self._backoff(attempt)
            except (httpx.NetworkError, httpx.RemoteProtocolError) as exc:
                message = f"{self._what()}: connection failed ({type(exc).__name__})"
                return self._error(message, "connection", attempt), self._backoff(attempt)
            except httpx.HTTPError as exc:
                message = f"{self._what()}: the request could not be sent ({type(exc).__name__})"
                return self._error(message, "request", attempt), None
        return self._read(reply, attempt)

    async def _post(self, headers: dict[str, str], body: dict[str, Any]) -> _Reply:
        import httpx

        timeout = httpx.Timeout(self.timeout_s)
        if self._client is not None:
            return await _send(self._client, self.url, headers, body, timeout)
        async with httpx.AsyncClient(timeout=timeout) as client:
            return await _send(client, self.url, headers, body, timeout)

    def _read(self, reply: _Reply, attempt: int) -> Completion | tuple[ProviderError, float | None]:
        status = reply.status
        raw = reply.text
        if 200 <= status < 300 and status not in ANSWERED:
            # Its status says the body is not the finished reply (a 206's is a part of one):
            # read, its pass verdict was taken. Sent again, the same request is answered the
            # same way, so it is not tried again.
            message = f"{self._what()}: HTTP {status} ({meaning(status)}), which is not a reply"
            raw_kept = redaction.cut(raw, _RAW_LIMIT)
            return self._error(message, "http_status", attempt, status=status, raw=raw_kept), None
        if status in ANSWERED:
            if reply.content is None:
                message = f"{self._what()}: the reply's body {reply.unread}"
                return self._error(message, "malformed_response", attempt), None
            try:
                completion = self._parse(reply.content, reply.headers)
            except (ValueError, KeyError, TypeError, IndexError) as exc:
                why = f" ({exc})" if isinstance(exc, MalformedReply) else ""
                message = f"{self._what()}: the reply is not a {self.protocol} response{why}"
                error = self._error(
                    message, "malformed_response", attempt, raw=redaction.cut(raw, _RAW_LIMIT)
                )
                if isinstance(exc, MalformedReply) and exc.completion is not None:
                    error.completion = dataclasses.replace(exc.completion, attempts=attempt)
                return error, None
            return dataclasses.replace(completion, attempts=attempt)
        unread = f" (its body {reply.unread}, not read)" if reply.content is None else ""
        message = f"{self._what()}: HTTP {status}{_server_says(raw)}{unread}"
        if 300 <= status < 400:
            message += _redirect_said(self.url, reply.headers.get("location"))
        error = self._error(
            message, "http_status", attempt, status=status, raw=redaction.cut(raw, _RAW_LIMIT)
        )
        if status not in RETRY_STATUSES and status < 500:
            return error, None
        asked = retry_after_seconds(reply.headers)
        if asked is not None and asked <= self.max_retry_after_s:
            return error, asked
        return error, self._backoff(attempt)

    def _parse(self, content: bytes, headers: httpx.Headers) -> Completion:
        data = _body_object(content, headers.get("content-type", ""))
        try:
            completion = self.parse(data)
        except (ValueError, KeyError, TypeError, IndexError):
            if "error" not in data:
                raise
            # Some proxies answer an upstream failure with a 2xx holding the protocol's error body.
            raise MalformedReply("the body is an error" + error_said(data)) from None
        if data.get("error") is not None:
            # A reply beside an error (a proxy that passes on what came before the failure):
            # the server says this text is not what it meant to send.
            raise MalformedReply(
                "the body holds the server's error beside the reply" + error_said(data),
                completion,
            )
        return completion

    def _error(
        self,
        message: str,
        kind: ErrorKind,
        attempt: int,
        *,
        status: int | None = None,
        raw: str | None = None,
    ) -> ProviderError:
        tries = f" (after {attempt} tries)" if attempt > 1 else ""
        return ProviderError(
            f"{message}{tries}", kind=kind, attempts=attempt, status=status, raw=raw
        )

    def _backoff(self, attempt: int) -> float:
        nominal = backoff_wait(self.backoff_s, attempt, self.backoff_max_s)
        return nominal * (1.0 + 0.25 * random.random())

    def _semaphore(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        semaphore = self._semaphores.get(loop)
        if semaphore is None:
            semaphore = self._semaphores[loop] = asyncio.Semaphore(self.concurrency)
        return semaphore

    def _what(self) -> str:
        return f"{self.name} model {self.model} at {self.url}"

    # --- pooled connections ------------------------------------------------------------------

    async def __aenter__(self) -> Self:
        import httpx

        if self._client is None:
            # No connection is kept for a later call: a reply a server sent beyond the one asked
            # for would wait on it and be read as the next call's.
            self._client = httpx.AsyncClient(
                timeout=httpx.Timeout(self.timeout_s),
                limits=httpx.Limits(max_keepalive_connections=0),
            )
        self._entered += 1
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._entered -= 1
        if self._entered == 0:
            await self.aclose()

    async def aclose(self) -> None:
        """Close the pooled client, if one is open."""
        client, self._client = self._client, None
        self._entered = 0
        if client is not None:
            await client.aclose()


async def _send(
    client: httpx.AsyncClient,
    url: str,
    headers: dict[str, str],
    body: dict[str, Any],
    timeout: httpx.Timeout,
) -> _Reply:
    """POST ``body`` and read the reply's body through ``read_body``."""
    async with client.stream("POST", url, headers=headers, json=body, timeout=timeout) as response:
        try:
            content = await read_body(response, MAX_BODY_BYTES)
        except UnreadableBody as exc:
            return _Reply(response.status_code, response.headers, None, str(exc))
    return _Reply(response.status_code, response.headers, content)


def _body_object(content: bytes, content_type: str) -> dict[str, Any]:
    """A 2xx body's JSON object; raises ``MalformedReply`` for any other body."""
    try:
        data = json.loads(content, object_pairs_hook=unique_keys)
    except DuplicateKey as exc:  # which of the two would count is the parser's whim
        raise MalformedReply(f"the body is ambiguous: {exc}") from None
    except RecursionError:
        # The parser recurses once per level of nesting; the body must not end the judgment
        # as an exception of ours.
        raise MalformedReply("the body is nested too deep to read") from None
    except ValueError:
        raise MalformedReply(_not_json(content, content_type)) from None
    if not isinstance(data, dict):
        raise MalformedReply("the body is not a JSON object")
    if lone_surrogate_in(data):
        raise MalformedReply(
            "the body holds a lone surrogate escape (\\uD800-\\uDFFF without its pair), "
            "which is not text"
        )
    return data


def _not_json(content: bytes, content_type: str) -> str:
    if content_type.split(";")[0].strip().lower() == "text/event-stream":
        return (
            "the body is not JSON; its Content-Type is text/event-stream, a streamed reply, "
            "which Oloproof does not ask for"
        )
    if content.lstrip().startswith((b"data:", b"event:")):
        # A server that streams whatever was asked, under a JSON Content-Type.
        return (
            "the body is not JSON; it is a stream of server-sent events (data: lines), which "
            "Oloproof does not ask for"
        )
    return "the body is not JSON"


def lone_surrogate_in(value: Any) -> bool:
    """Whether a JSON value holds a lone surrogate (a \\uD800-\\uDFFF escape the parser read
    without its pair) in any text or key: no character, so no ledger or UTF-8 text holds it."""
    pending = [value]
    while pending:  # a stack, not recursion: the body may nest as deep as the parser reads
        item = pending.pop()
        if isinstance(item, str):
            if _LONE_SURROGATE.search(item):
                return True
        elif isinstance(item, dict):
            pending.extend(item.keys())
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
    return False


def usage_object(data: Mapping[str, Any]) -> Mapping[str, Any]:
    """The body's ``usage`` (empty when it gives none); raises ``MalformedReply`` when it is
    not an object."""
    usage = data.get("usage")
    if usage is None:
        return {}
    if not isinstance(usage, dict):
        raise MalformedReply("usage is not an object")
    return usage


def token_count(usage: Mapping[str, Any], key: str) -> int | None:
    """``usage[key]``, None when it is not given; raises ``MalformedReply`` for a count that is
    not a whole number up to ``MAX_TOKEN_COUNT`` (a negative one would lower the run's totals)."""
    value = usage.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_TOKEN_COUNT:
        raise MalformedReply(f"usage.{key} is not a whole number of tokens")
    return value


def _server_says(raw: str) -> str:
    """``: <the server's error message>`` when the body holds one, shortened."""

    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):  # not JSON, or nested too deep to read: shown as it is
        text = raw
    else:
        text = _error_message(data)
    return ": " + quoted(text) if text.strip() else ""


def error_said(data: Any) -> str:
    """``: <the message of data's error object>``, quoted, or '' when it has none."""
    said = _error_message(data)
    return f": {quoted(said)}" if said.strip() else ""


def _error_message(data: Any) -> str:
    """The message of the protocol's error body (``{"error": {"message": ...}}``), or ''."""
    error = data.get("error") if isinstance(data, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    return message if isinstance(message, str) else ""


def _redirect_said(url: str, location: str | None) -> str:
    """``; a redirect to http://HOST/PATH, not followed: …``: where a redirect points (its
    scheme, host and path alone: a query or a user name may hold a key) and why no call goes
    there."""
    from urllib.parse import urljoin, urlsplit

    target = ""
    try:
        parts = urlsplit(urljoin(url, (location or "").strip()))
        port = f":{parts.port}" if parts.port is not None else ""
        if location and parts.scheme in ("http", "https") and parts.hostname:
            target = f" to {quoted(f'{parts.scheme}://{parts.hostname}{port}{parts.path}')}"
    except ValueError:  # a port that is no number, a host that is no host: said as no place
        pass
    return (
        f"; a redirect{target}, not followed: a call carries the key, which goes to base_url "
        "alone; if the model is served there, set base_url to it"
    )


def quoted(text: str) -> str:
    """A server's text on one line, shortened to ``_MESSAGE_LIMIT`` characters."""
    text = redaction.one_line(text)
    return text if len(text) <= _MESSAGE_LIMIT else redaction.cut(text, _MESSAGE_LIMIT - 1) + "…"


def optional_text(data: Mapping[str, Any], key: str, where: str = "") -> str | None:
    """``data[key]``, None when it is not given (absent, null or empty); raises
    ``MalformedReply`` for a value that is not text. ``where`` names the object that holds it
    (``choices[0].``) in the message."""
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        # A number or an object where the protocol has text: read as "not given" it would
        # hide a reply in the wrong shape (a finish_reason of {"type": "length"} hides a cut).
        raise MalformedReply(f"{where}{key} is not text")
    return value or None


def said_to_be(data: Mapping[str, Any], key: str, expected: str, where: str = "") -> None:
    """Raise ``MalformedReply`` when ``data`` gives ``key`` (``role``, ``type``) as anything but
    ``expected``: a body that says it is not the model's reply (a message in the ``user`` role,
    as a proxy echoing the request's turn sends; Anthropic's ``"type": "error"``) is none,
    whatever text it holds. ``where`` names the object that holds it (``choices[0].message.``).
    """
    value = data.get(key)
    if value is None or value == expected:
        return
    what = (
        "the body holds no reply of the model's"
        if key == "role"
        else "the body says it is not a reply"
    )
    shown = json.dumps(value, ensure_ascii=False) if isinstance(value, str) else "not text"
    raise MalformedReply(f'{where}{key} is {shown}, not "{expected}": {what}')


def unfinished(key: str, data: Mapping[str, Any]) -> str:
    """Why a reply whose ``data`` gives no ``key`` (the finish or stop reason: absent, null or
    empty) is not the model's whole answer.

    A non-streaming reply always says why it ended (OpenAI's, vLLM's, llama.cpp's and Ollama's
    servers, Anthropic's API, which documents it as non-null there); only a stream's chunks
    carry null until the last, so a body without one is a stream a proxy joined before its end.
    """
    said = json.dumps(data[key]) if key in data else "absent"
    return (
        f"the reply does not say why it ended ({key} {said}), as a non-streaming reply does: "
        "it is a stream joined before its end, not the model's whole answer"
    )


def _key_fault(key: str) -> str | None:
    """What in ``key`` no header value can carry, or None. White space at its end (a line of
    a ``.env`` file, say) ends the header's value, which h11 refuses: every call would fail
    before it is sent, as a request that could not be made."""
    fault = unsendable(key)
    if fault is None and key != key.rstrip(" \t"):
        return "white space at its end"
    return fault
