"""A system reached over HTTP: each case input is POSTed as the JSON body.

The response must be a JSON object. The output is read at ``output_path`` (the whole body when
none is given) and each artifact kind at its dotted path; artifacts are validated like the
ones a callable system records. A missing field or malformed artifact is an ``ArtifactError``
(the run stops, exit 2). Everything else about a reply is the endpoint's doing and raises
``HttpSystemError``, which the engine records as that case errored: a server that keeps failing
(connection errors, timeouts, 429, 5xx after every retry; the wait between tries doubles up to
``providers.MAX_BACKOFF_S``, and a case stopped at its timeout while retrying keeps the last
failure in its record), refuses the request (another 4xx),
redirects, answers with a 2xx other than 200, 201 or 203 (a ``202 Accepted`` has not done
the work), answers with no body or with more than ``MAX_RESPONSE_BYTES``, with a body it cannot
read whole (``oloproof.providers.read_body``: in a coding not asked for, a gzip stream cut
short), or with a body that is not a JSON object the ledger can record as it reads (cut off
part way, not UTF-8, not JSON, another JSON value, a key named twice, nested deeper than
``MAX_NESTING``, a number or text the ledger cannot hold). The Content-Type is not checked: the
body says what it is. Such an error names the status and quotes at most the body's first
characters, never cut inside a secret.

Header values may hold ``${NAME}``: the variable is read from the environment at call time.
Header values are never part of the identity; a value read from the environment is registered
with ``oloproof.redaction``, so it is never stored or printed, even when the endpoint echoes it.
A header that cannot be sent as it resolves (``header_fault``: a name that is not a token, or
one that frames the body, ``Content-Length`` or ``Transfer-Encoding``; a value holding a line
break, a control character, a character outside ASCII, bytes that are not text, or white space
at an end) is a ``ConfigError`` naming the header and the variable at fault, never the value; a
run is refused for it when planned, before any case calls.

Oloproof cannot see the code behind an endpoint, so by default no run reuses another's
executions: every case calls the endpoint on every run (judgments of an unchanged output are
still reused). A project that declares ``reuse: {version: ...}`` opts in: executions are then
reused while the name, version, URL, paths and that declared version stay the same.
"""

from __future__ import annotations

import asyncio
import codecs
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import httpx

from ledger import CodecError, encode
from oloproof import redaction, strictjson
from oloproof.answering_statuses import ANSWERED, meaning
from oloproof.dataset import MAX_NESTING, Case, nesting
from oloproof.envnames import ENV_REFERENCE, UNREAD_REFERENCE
from oloproof.errors import ArtifactError, ConfigError
from oloproof.header_text import unsendable
from oloproof.jsonkeys import DuplicateKey
from oloproof.providers import (
    ACCEPT_ENCODING,
    MAX_BODY_BYTES,
    BodyTooLarge,
    UnreadableBody,
    backoff_wait,
    read_body,
    retry_after_seconds,
    unreadable_codings,
)
from oloproof.sdk import ARTIFACT_MODELS, validate_artifact
from oloproof.systems.base import ExecContext, Execution, keep_last_failure

if TYPE_CHECKING:
    from oloproof.config import HttpSystem

# RFC 9110's token, the only header names h11 sends.
_HEADER_NAME = re.compile(r"[-!#$%&'*+.^_`|~0-9A-Za-z]+")
_CANNOT = ", which an HTTP header cannot carry"
# The headers that say where the request body ends: httpx writes them for the JSON it sends.
_FRAMING = frozenset({"content-length", "transfer-encoding"})
_RETRY_STATUS = 429
_REDIRECTS = frozenset({301, 302, 303, 307, 308})  # the 3xx that send a request elsewhere
_EXCERPT_CHARS = 200
# A case's answer is recorded whole; a reply far beyond any answer (a runaway stream) would
# only exhaust memory before it failed, so reading stops here.
MAX_RESPONSE_BYTES = MAX_BODY_BYTES
# A Retry-After asking for longer (a day, a date years ahead, "inf") is not waited for: the
# case would sit out its whole timeout and be recorded as slow, the server's 429 lost. The
# doubling backoff is used instead, as a judge's provider does.
MAX_RETRY_AFTER_S = 60.0


class HttpSystemError(RuntimeError):
    """The endpoint failed for one case; the engine records the case as errored."""


class HttpSystemAdapter:
    """POSTs ``case.input`` to ``settings.url`` and reads the output and artifacts back."""

    kind = "http"

    def __init__(
        self, *, name: str, version: str, settings: HttpSystem, where: str, concurrency: int
    ) -> None:
        self._settings = settings
        self._where = where
        self._concurrency = max(1, concurrency)
        self._client: httpx.AsyncClient | None = None
        try:
            url = httpx.URL(settings.url)
        except httpx.InvalidURL as exc:
            raise ConfigError(f"{where}: system.http.url: not a valid URL ({exc})") from None
        if url.scheme not in ("http", "https") or not url.host:
            raise ConfigError(
                f"{where}: system.http.url: expected an http:// or https:// URL, "
                f"found {settings.url!r}"
            )
        for kind in settings.artifacts:
            if kind not in ARTIFACT_MODELS:
                known = ", ".join(sorted(ARTIFACT_MODELS))
                raise ConfigError(
                    f"{where}: system.http.artifacts: unknown artifact kind {kind!r} "
                    f"(known kinds: {known})"
                )
        for key, path in {"output_path": settings.output_path, **settings.artifacts}.items():
            if path is not None and not all(path.split(".")):
                label = "output_path" if key == "output_path" else f"artifacts.{key}"
                raise ConfigError(
                    f"{where}: system.http.{label}: {path!r} is not a dotted path like `a.b.c`"
                )
        self._identity: dict[str, Any] = {
            "kind": self.kind,
            "name": name,
            "version": version,
            "url": settings.url,
            "output_path": settings.output_path,
            "artifacts": dict(sorted(settings.artifacts.items())),
        }
        # An output or artifact may nest MAX_NESTING levels below where it is read; the levels
        # of the body above it are the server's envelope and take none of them.
        paths = [p for p in (settings.output_path, *settings.artifacts.values()) if p is not None]
        self._nesting = MAX_NESTING + max((len(p.split(".")) for p in paths), default=0)
        self.reuses_executions = settings.reuse is not None
        if settings.reuse is not None:
            self._identity["reuse"] = settings.reuse.version

    def identity(self) -> dict[str, Any]:
        return self._identity

    def fingerprints(self) -> dict[str, dict[str, Any]]:
        return {}  # the code behind an endpoint cannot be seen

    async def execute(self, case: Case, ctx: ExecContext) -> Execution:
        body = await self._post(case)
        settings = self._settings
        if settings.output_path is None:
            output: Any = body
        else:
            output = _read_path(body, settings.output_path, case.id)
        artifacts: dict[str, list[dict[str, Any]]] = {}
        for kind, path in settings.artifacts.items():
            value = _read_path(body, path, case.id)
            try:
                artifacts[kind] = [validate_artifact(kind, value)]
            except ArtifactError as exc:
                detail = exc.message.removeprefix(f"malformed {kind} artifact: ")
                raise ArtifactError(
                    f"case {case.id!r}: {path} is not a valid {kind} artifact: {detail}"
                ) from None
        return Execution(output=output, artifacts=artifacts)

    async def aclose(self) -> None:
        if self._client is not None:
            client, self._client = self._client, None
            await client.aclose()

    # ------------------------------------------------------------------ request and retries

    def _get_client(self) -> httpx.AsyncClient:
        # Created on first use so that it belongs to the event loop that runs the cases.
        if self._client is None:
            # No connection is kept for a later request: a reply a server sent beyond the one
            # asked for would wait on it and be read as the next case's answer.
            limits = httpx.Limits(max_connections=self._concurrency, max_keepalive_connections=0)
            self._client = httpx.AsyncClient(
                timeout=httpx.Timeout(self._settings.timeout_s),
                limits=limits,
                follow_redirects=False,
                # Only what ``read_body`` decodes within its limit; a configured header wins.
                headers={"accept-encoding": ACCEPT_ENCODING},
            )
        return self._client

    def _headers(self) -> dict[str, str]:
        """The configured headers with ``${NAME}`` read from the environment, now."""
        headers = self._settings.headers
        found = first_header_fault(headers, os.environ)
        if found is not None:
            raise ConfigError(f"{self._where}: {found[1].text}")
        resolved: dict[str, str] = {}
        for header, template in headers.items():
            for name in header_variables(template):
                redaction.register(os.environ[name])  # kept out of everything stored or printed
            resolved[header] = _resolve(template, os.environ)
        return resolved

    async def _post(self, case: Case) -> dict[str, Any]:
        failed: list[str] = []  # what each try that failed failed on
        try:
            return await self._tries(case, failed)
        except asyncio.CancelledError as exc:
            # Stopped at the case's timeout while retrying: its record keeps why it was.
            if failed:
                tries = self._settings.retries + 1
                keep_last_failure(exc, f"try {len(failed)} of {tries} had failed: {failed[-1]}")
            raise

    async def _tries(self, case: Case, failed: list[str]) -> dict[str, Any]:
        settings = self._settings
        headers = self._headers()
        client = self._get_client()
        tries = settings.retries + 1
        problem = ""
        for attempt in range(tries):
            wait = backoff_wait(settings.backoff_s, attempt + 1)
            try:
                # httpx's timeout bounds each read; a reply that trickles in must end in time too.
                async with (
                    asyncio.timeout(settings.timeout_s),
                    client.stream(
                        "POST", settings.url, json=case.input, headers=headers
                    ) as response,
                ):
                    content = await _read_capped(response, case.id, settings.url)
            except (httpx.TimeoutException, TimeoutError):
                problem = f"no response within {settings.timeout_s:g} s"
            except httpx.TransportError as exc:
                problem = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            else:
                status = response.status_code
                if status == _RETRY_STATUS or status >= 500:
                    problem = f"HTTP {status}{_excerpt(content)}"
                    retry_after = retry_after_seconds(response.headers)
                    if retry_after is not None and retry_after <= MAX_RETRY_AFTER_S:
                        wait = retry_after
                elif status >= 400:
                    raise HttpSystemError(
                        f"case {case.id!r}: POST {settings.url} was refused: "
                        f"HTTP {status}{_excerpt(content)}"
                    )
                elif status in _REDIRECTS:
                    # Not followed: a body sent beside a redirect is not the system's answer.
                    where = response.headers.get("location")
                    to = f" to {where}" if where else ""
                    raise HttpSystemError(
                        f"case {case.id!r}: POST {settings.url} answered HTTP {status}, a "
                        f"redirect{to}, which is not followed: set url to the endpoint itself"
                    )
                elif status >= 300:
                    # 300, 304, 305: nothing to follow, and no answer either.
                    raise HttpSystemError(
                        f"case {case.id!r}: POST {settings.url} answered HTTP {status}, which "
                        "is no answer to a POST: only a 200, 201 or 203 reply carries the "
                        "system's output"
                    )
                elif not content:
                    raise HttpSystemError(
                        f"case {case.id!r}: POST {settings.url} answered HTTP {status} with no "
                        "body, so there is no output"
                    )
                elif status not in ANSWERED:
                    # Read as the answer, a queued job's "accepted" passed the case.
                    # Unregistered ones are refused too.
                    raise HttpSystemError(
                        f"case {case.id!r}: POST {settings.url} answered HTTP {status} "
                        f"({meaning(status)}), which carries no output: only a 200, 201 or 203 "
                        "reply does"
                    )
                else:
                    return _json_object(response, content, case.id, settings.url, self._nesting)
            failed.append(problem)
            if attempt + 1 < tries:
                await asyncio.sleep(wait)
        raise HttpSystemError(
            f"case {case.id!r}: POST {settings.url} failed after {tries} "
            f"{'try' if tries == 1 else 'tries'}: {problem}"
        )


# ---------------------------------------------------------------------------- helpers


def header_variables(template: str) -> list[str]:
    """The environment variables a header value reads (``${NAME}``), in order."""
    return ENV_REFERENCE.findall(template)


@dataclass(frozen=True)
class HeaderFault:
    """Why a configured header cannot be sent. It never holds a value read from the
    environment, which may be a secret."""

    text: str  # the error after the config location: "system.http.headers.<header>: …"
    variable: str | None = None  # the environment variable at fault
    unset: bool = False  # that variable is not set at all


def header_fault(header: str, template: str, environ: Mapping[str, str]) -> HeaderFault | None:
    """Why ``header`` with the value ``template``, its ``${NAME}`` read from ``environ``, cannot
    be sent, or None when it can: what httpx (which sends header text as ASCII) or h11 (which
    refuses what RFC 9110 does not allow in a field) would fail every case on."""
    if not _HEADER_NAME.fullmatch(header):
        return HeaderFault(
            f"system.http.headers: {header!r} is not an HTTP header name (letters, digits and "
            "!#$%&'*+-.^_`|~ only)"
        )
    field = f"system.http.headers.{header}:"
    if header.lower() in _FRAMING:
        # Sent in place of the body's own framing, it cuts the case's input short or has the
        # endpoint read the chunk sizes as part of it.
        return HeaderFault(
            f"{field} Oloproof sends the case's input as the body and frames it itself; leave "
            "the header out"
        )
    names = header_variables(template)
    for name in names:
        if name not in environ:
            return HeaderFault(f"{field} environment variable {name} is not set", name, True)
    for name in names:
        what = unsendable(environ[name])
        if what is not None:
            return HeaderFault(f"{field} environment variable {name} holds {what}{_CANNOT}", name)
    for name in names:
        if 0 < len(environ[name]) < redaction.MIN_LENGTH:
            # Registered, it would not be searched for: an endpoint that echoes the header
            # would have it stored and printed as it is, where the value is promised kept out.
            return HeaderFault(
                f"{field} environment variable {name} holds fewer than {redaction.MIN_LENGTH} "
                "characters, too short to be kept out of what a run stores and prints (so short "
                "a text occurs in ordinary text); give it a longer value, or write a value that "
                "is no secret in the header itself",
                name,
            )
    configured = ENV_REFERENCE.sub("", template)
    what = unsendable(configured)
    if what is not None:
        return HeaderFault(f"{field} its configured value holds {what}{_CANNOT}")
    meant = UNREAD_REFERENCE.search(configured)
    if meant is not None:
        # Meant as a variable (as a shell reads one, or with its brace left open): sent as
        # written, every call would fail its authentication with the key never read.
        return HeaderFault(
            f"{field} {meant.group(0)} would be sent as written: a header value reads a "
            f"variable written ${{{meant.group(1)}}} (to send a '$' itself, give the whole value "
            "in a variable)"
        )
    value = _resolve(template, environ)
    unreadable = unreadable_codings(value) if header.lower() == "accept-encoding" else []
    if unreadable:
        # A configured header wins over the one Oloproof sends: a reply in a coding it cannot
        # decode would error every case, saying Oloproof did not ask for it.
        codings = ", ".join(unreadable)
        return HeaderFault(
            f"{field} asks for {codings}, which Oloproof cannot decode (it reads gzip and "
            "deflate, and asks for them itself); leave the header out"
        )
    if value == value.strip(" \t"):
        return None
    end = "start" if value[:1] in (" ", "\t") else "end"
    # The white space is the config's beside a variable left empty, or a variable's own.
    for name in names:
        if not environ[name]:
            return HeaderFault(
                f"{field} environment variable {name} is empty, which leaves white space at the "
                f"{end} of the header's value{_CANNOT}",
                name,
            )
    for name in names:
        if environ[name] != environ[name].strip(" \t"):
            return HeaderFault(
                f"{field} environment variable {name} holds white space at the start or end of "
                f"the header's value{_CANNOT}",
                name,
            )
    return HeaderFault(f"{field} its configured value has white space at its {end}{_CANNOT}")


def first_header_fault(
    headers: Mapping[str, str], environ: Mapping[str, str]
) -> tuple[str, HeaderFault] | None:
    """The first of ``headers`` (name: configured value) that cannot be sent as ``environ``
    resolves it, and why (``header_fault``); None when every one can."""
    for header, template in headers.items():
        fault = header_fault(header, template, environ)
        if fault is not None:
            return header, fault
    return None


def _resolve(template: str, environ: Mapping[str, str]) -> str:
    return ENV_REFERENCE.sub(lambda match: environ[match.group(1)], template)


async def _read_capped(response: httpx.Response, case_id: str, url: str) -> bytes:
    """The body, read up to ``MAX_RESPONSE_BYTES``; an errored case when it is larger or cannot
    be read whole."""
    try:
        return await read_body(response, MAX_RESPONSE_BYTES)
    except BodyTooLarge:
        raise HttpSystemError(
            f"case {case_id!r}: POST {url} answered with more than {MAX_RESPONSE_BYTES:,} "
            "bytes, more than any answer Oloproof records; it stopped reading"
        ) from None
    except UnreadableBody as exc:
        raise HttpSystemError(
            f"case {case_id!r}: POST {url} answered HTTP {response.status_code} with a body "
            f"that {exc}"
        ) from None


def _excerpt(content: bytes) -> str:
    """``: `` and the body's first characters on one line, or "" for an empty body."""
    text = redaction.one_line(content.decode("utf-8-sig", "replace"))
    return f": {_cut(text)}" if text else ""


def _cut(text: str) -> str:
    # Never part way through a configured secret: its first characters would be stored as
    # they are, where redaction (when the error is recorded) only recognises the whole.
    return text if len(text) <= _EXCERPT_CHARS else redaction.cut(text, _EXCERPT_CHARS) + "…"


def _json_object(
    response: httpx.Response, content: bytes, case_id: str, url: str, nesting_limit: int
) -> dict[str, Any]:
    """The body as a JSON object the ledger records as it reads, nested at most
    ``nesting_limit`` levels; ``HttpSystemError`` (the case errored) for any other body, naming
    the status and what is wrong with it."""
    answered = f"case {case_id!r}: POST {url} answered HTTP {response.status_code} with "
    try:
        # JSON between systems is UTF-8 (RFC 8259), which may open with a byte-order mark.
        text = content.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        at = exc.start + (len(codecs.BOM_UTF8) if content.startswith(codecs.BOM_UTF8) else 0)
        raise HttpSystemError(
            f"{answered}a body that is not UTF-8 (byte 0x{content[at]:02x} at offset {at})"
            f"{_excerpt(content)}"
        ) from None
    try:
        body = strictjson.loads(text)
    except json.JSONDecodeError as exc:
        found = _not_json(response, len(content), text, exc)
        raise HttpSystemError(answered + found + _excerpt(content)) from None
    except DuplicateKey as exc:
        raise HttpSystemError(f"{answered}ambiguous JSON: {_cut(str(exc))}") from None
    except strictjson.Unrecordable as exc:
        raise HttpSystemError(f"{answered}JSON Oloproof cannot record ({_cut(str(exc))})") from None
    except RecursionError:
        raise HttpSystemError(f"{answered}JSON nested deeper than {nesting_limit} levels") from None
    if not isinstance(body, dict):
        raise HttpSystemError(
            f"{answered}JSON that is {_describe(body)}, not an object{_excerpt(content)}"
        )
    # Counting brackets is cheap and bounds the depth from above, quotes included.
    brackets = text.count("[") + text.count("{")
    if brackets > nesting_limit and nesting(body, nesting_limit) > nesting_limit:
        raise HttpSystemError(f"{answered}JSON nested deeper than {nesting_limit} levels")
    if strictjson.SURROGATE_ESCAPE.search(text):
        try:
            encode(body)
        except CodecError:
            raise HttpSystemError(
                f"{answered}JSON holding a lone surrogate escape (\\uD800-\\uDFFF without its "
                "pair), which is not text"
            ) from None
    return body


def _not_json(response: httpx.Response, size: int, text: str, exc: json.JSONDecodeError) -> str:
    """What is wrong with a body the JSON parser stopped in."""
    ended = exc.msg.startswith("Unterminated string") or exc.pos >= len(text.rstrip())
    if ended and text.strip():
        framed = "content-length" in response.headers or "transfer-encoding" in response.headers
        # Without either, only the connection closing ends a body: a reply cut off looks whole.
        closed = "" if framed else ", and no Content-Length: the connection closed there"
        return f"a body that ends part way through its JSON ({size:,} bytes{closed})"
    media = response.headers.get("content-type", "").split(";")[0].strip()
    kind = f"Content-Type {_cut(media)}" if media else "no Content-Type"
    return f"a body that is not JSON ({exc.msg} at line {exc.lineno} column {exc.colno}; {kind})"


def _read_path(body: dict[str, Any], path: str, case_id: str) -> Any:
    """The value at dotted ``path`` in ``body``; list items are addressed by index (``a.0.b``)."""
    current: Any = body
    walked: list[str] = []
    for part in path.split("."):
        if isinstance(current, dict):
            if part in current:
                current = current[part]
                walked.append(part)
                continue
            at = f" at '{'.'.join(walked)}'" if walked else ""
            keys = ", ".join(str(k) for k in current)
            found = f"found keys{at}: {keys}" if keys else f"found an empty object{at}"
        elif isinstance(current, list) and part.isdigit():
            index = int(part)
            if index < len(current):
                current = current[index]
                walked.append(part)
                continue
            found = f"found a list of {len(current)} at '{'.'.join(walked)}'"
        else:
            found = f"found {_describe(current)} at '{'.'.join(walked)}'"
        raise ArtifactError(f"case {case_id!r}: response has no field at '{path}' ({found})")
    return current


def _describe(value: Any) -> str:
    # A list's length tells a reply that wraps the object in a list from one that lists results.
    return f"a list of {len(value)}" if isinstance(value, list) else strictjson.kind(value)
