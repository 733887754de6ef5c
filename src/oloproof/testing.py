"""Stand-ins for the external things a judge talks to, for your tests and ours.

``ScriptedJudgeServer`` is a real HTTP server on 127.0.0.1 that speaks both judge protocols
(``POST /v1/chat/completions`` and ``POST /v1/messages``) and answers each request with the
next scripted reply::

    from oloproof.testing import ScriptedJudgeServer, fail, rate_limit, verdict

    with ScriptedJudgeServer(rate_limit(0.05), fail(503), verdict(True)) as server:
        ...  # point a judge at server.openai_base_url (or server.anthropic_base_url)
        assert len(server.requests) == 3

Replies: ``answer(text)`` (a well-formed reply carrying ``text``), ``verdict(passed)`` and
``score(x)`` (answers holding a judgment), ``fail(status)``, ``rate_limit(seconds)`` (429 with
``Retry-After``), ``hang(seconds)`` (no reply until the time is up: longer than the client's
timeout), ``nonsense()`` (a well-formed reply whose text is no judgment) and ``raw(body)`` (any
bytes at all). When the script runs out the server answers with ``default`` (a reply, or a
function of the request that returns one) or, without one, HTTP 500. ``echo(style)`` is such a
function: a judge that repeats its input, as small local models do. Every request is
recorded with its headers, body and arrival time (``time.monotonic()``), including requests
to a path the server does not serve (answered 404, consuming no scripted reply).

A reply reports the prompt's tokens as a server would count them: one per 4 characters of the
messages it read, unless the reply gives ``input_tokens``. ``drops_system=True`` makes the
server behave like a chat template without a system role: it ignores the system message (for
its token count and for what ``echo`` repeats), as llama.cpp's ``gemma`` format does.

``ScriptedProvider`` stands in for a provider in-process (no HTTP), and ``ScriptedJudge`` for a
whole judge: it returns the verdicts you give it, per case id.
"""

from __future__ import annotations

import json
import math
import re
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Literal, Self

from oloproof.evaluators.base import CaseView
from oloproof.providers import Completion, Usage
from oloproof.results import MetricKind, Verdict

__all__ = [
    "RecordedRequest",
    "Reply",
    "ScriptedJudge",
    "ScriptedJudgeServer",
    "ScriptedProvider",
    "answer",
    "echo",
    "fail",
    "hang",
    "nonsense",
    "prompt_tokens",
    "rate_limit",
    "raw",
    "score",
    "verdict",
]

OPENAI_PATH = "/v1/chat/completions"
ANTHROPIC_PATH = "/v1/messages"

ReplyKind = Literal["answer", "fail", "rate_limit", "hang", "raw"]


@dataclass(frozen=True)
class Reply:
    """One scripted reply; build it with the functions below rather than by hand."""

    kind: ReplyKind
    text: str = ""
    status: int = 200
    headers: tuple[tuple[str, str], ...] = ()
    seconds: float = 0.0
    input_tokens: int | None = None
    output_tokens: int = 20
    reply_id: str | None = None
    fingerprint: str | None = None
    body: bytes = b""
    content_type: str = "application/json"


def answer(
    text: str,
    *,
    input_tokens: int | None = None,
    output_tokens: int = 20,
    reply_id: str | None = None,
    fingerprint: str | None = None,
    delay_s: float = 0.0,
) -> Reply:
    """A well-formed reply whose text is ``text``, after ``delay_s`` seconds.

    ``input_tokens`` None: the server counts the prompt it read (4 characters a token).
    """
    return Reply(
        "answer",
        text=text,
        seconds=delay_s,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        reply_id=reply_id,
        fingerprint=fingerprint,
    )


def verdict(passed: bool, reason: str = "scripted", **options: Any) -> Reply:
    """A reply holding ``{"verdict": "pass" | "fail", "reason": reason}``."""
    text = json.dumps({"verdict": "pass" if passed else "fail", "reason": reason})
    return answer(text, **options)


def score(value: float, reason: str = "scripted", **options: Any) -> Reply:
    """A reply holding ``{"score": value, "reason": reason}``."""
    return answer(json.dumps({"score": value, "reason": reason}), **options)


def nonsense(text: str = "Well, it depends on how you look at it.", **options: Any) -> Reply:
    """A well-formed reply whose text holds no judgment."""
    return answer(text, **options)


def fail(status: int = 500, message: str = "scripted failure") -> Reply:
    """An error reply with ``status``, in the protocol's error shape."""
    return Reply("fail", text=message, status=status)


def rate_limit(retry_after: float = 0.05, *, header: str = "retry-after") -> Reply:
    """429 asking the client to wait ``retry_after`` seconds (``header: retry-after-ms`` too)."""
    value = f"{retry_after * 1000:g}" if header == "retry-after-ms" else f"{retry_after:g}"
    return Reply("rate_limit", text="rate limited", status=429, headers=((header, value),))


def hang(seconds: float = 5.0) -> Reply:
    """Say nothing for ``seconds`` (or until the server closes), then drop the connection."""
    return Reply("hang", seconds=seconds)


def raw(body: str | bytes, *, status: int = 200, content_type: str = "text/plain") -> Reply:
    """Exactly ``body`` with ``status``: for replies that are not the protocol's at all."""
    data = body.encode("utf-8") if isinstance(body, str) else body
    return Reply("raw", status=status, body=data, content_type=content_type)


# The headers a client sends its API key in (lower case, as ``RecordedRequest`` keeps them).
_CREDENTIAL_HEADERS = frozenset({"authorization", "proxy-authorization", "x-api-key", "api-key"})


@dataclass(frozen=True)
class RecordedRequest:
    """One request the server received.

    Its ``headers`` hold what the client sent, its API key included; its ``repr`` (what a
    failed assertion prints, in a CI log) shows ``[redacted]`` in place of a credential's value.
    """

    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    received_at: float

    def __repr__(self) -> str:
        headers = {
            name: "[redacted]" if name in _CREDENTIAL_HEADERS else value
            for name, value in self.headers.items()
        }
        return (
            f"RecordedRequest(method={self.method!r}, path={self.path!r}, headers={headers!r}, "
            f"body={self.body!r}, received_at={self.received_at!r})"
        )

    def json(self) -> Any:
        return json.loads(self.body)

    @property
    def user_message(self) -> str:
        """The user message the request carries, in either protocol ('' when it has none)."""
        texts = [text for role, text in self.messages() if role == "user"]
        return texts[-1] if texts else ""

    @property
    def system_message(self) -> str:
        """The instructions: the system message or ``system`` field ('' when there is none)."""
        return "\n\n".join(text for role, text in self.messages() if role == "system")

    def messages(self) -> list[tuple[str, str]]:
        """``(role, text)`` of every message, the messages protocol's ``system`` field first."""
        try:
            data = self.json()
        except ValueError:
            return []
        if not isinstance(data, dict):
            return []
        found: list[tuple[str, str]] = []
        if isinstance(data.get("system"), str):
            found.append(("system", data["system"]))
        for message in data.get("messages") or []:
            if isinstance(message, dict) and isinstance(message.get("content"), str):
                found.append((str(message.get("role")), message["content"]))
        return found


Responder = Callable[[RecordedRequest], Reply]

_NOT_A_REPLY = "a scripted reply is a Reply (answer(...), verdict(...), fail(...) and the rest)"


def _replies(replies: tuple[Any, ...]) -> tuple[Reply, ...]:
    for reply in replies:
        if not isinstance(reply, Reply):
            raise TypeError(f"{_NOT_A_REPLY}, not {type(reply).__name__}")
    return replies


class ScriptedJudgeServer:
    """A scripted judge endpoint on 127.0.0.1, run in a background thread.

    ``port`` 0 (the default) takes a free port; ``url`` says which.
    """

    def __init__(
        self,
        *replies: Reply,
        default: Reply | Responder | None = None,
        port: int = 0,
        drops_system: bool = False,
    ) -> None:
        self._port = port
        self.drops_system = drops_system
        self._replies: deque[Reply] = deque(_replies(replies))
        self._default: Reply | Responder | None = None
        self.default = default
        self._requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None

    # --- lifecycle -------------------------------------------------------------------------

    def start(self) -> Self:
        if self._httpd is None:
            self._httpd = _Server(("127.0.0.1", self._port), _Handler, self)
            self._thread = threading.Thread(
                target=self._httpd.serve_forever,
                kwargs={"poll_interval": 0.05},
                name="scripted-judge-server",
                daemon=True,
            )
            self._thread.start()
        return self

    def close(self) -> None:
        httpd, self._httpd = self._httpd, None
        if httpd is None:
            return
        self._stopping.set()
        httpd.shutdown()
        httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # --- addresses -------------------------------------------------------------------------

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>``."""
        if self._httpd is None:
            raise RuntimeError("the server is not running; use it as a context manager")
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def openai_base_url(self) -> str:
        """The ``base_url`` of a judge with ``provider: openai``."""
        return f"{self.url}/v1"

    @property
    def anthropic_base_url(self) -> str:
        """The ``base_url`` of a judge with ``provider: anthropic``."""
        return self.url

    # --- the script and the record --------------------------------------------------------

    def script(self, *replies: Reply) -> None:
        """Queue more replies, used in order after the ones already queued."""
        with self._lock:
            self._replies.extend(_replies(replies))

    @property
    def default(self) -> Reply | Responder | None:
        """The reply given once the scripted ones run out: a ``Reply``, a function of the
        request returning one, or None (an error reply saying none is left)."""
        return self._default

    @default.setter
    def default(self, value: Reply | Responder | None) -> None:
        # Checked here, in the test's own thread: found only when a request came, a wrong
        # value would fail in the server's thread, and the test would see calls failing.
        if value is not None and not isinstance(value, Reply) and not callable(value):
            raise TypeError(f"default: {_NOT_A_REPLY}, not {type(value).__name__}")
        self._default = value

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received so far, in order of arrival."""
        with self._lock:
            return list(self._requests)

    @property
    def pending(self) -> int:
        """How many scripted replies are left."""
        with self._lock:
            return len(self._replies)

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(request)

    def _next(self, request: RecordedRequest) -> Reply | None:
        with self._lock:
            if self._replies:
                return self._replies.popleft()
        default = self._default
        if default is None or isinstance(default, Reply):
            return default
        return default(request)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False  # a hanging handler must not hold up close()

    def __init__(
        self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler], owner: Any
    ) -> None:
        super().__init__(address, handler)
        self.owner: ScriptedJudgeServer = owner


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep test output clean

    def do_POST(self) -> None:
        owner = self.server.owner
        length = int(self.headers.get("content-length") or 0)
        request = RecordedRequest(
            method="POST",
            path=self.path,
            headers={key.lower(): value for key, value in self.headers.items()},
            body=self.rfile.read(length),
            received_at=time.monotonic(),
        )
        owner._record(request)
        if self.path not in (OPENAI_PATH, ANTHROPIC_PATH):
            self._send(404, _error_body(self.path, "not_found", f"no route {self.path}"))
            return
        reply = owner._next(request)
        if reply is None:
            self._send(500, _error_body(self.path, "api_error", "no scripted reply left"))
        elif not isinstance(reply, Reply):  # a responder's: said in the reply the client reads
            kind = type(reply).__name__
            self._send(500, _error_body(self.path, "api_error", f"{_NOT_A_REPLY}, not {kind}"))
        elif reply.kind == "hang":
            owner._stopping.wait(reply.seconds)
            self.close_connection = True
        elif reply.kind == "raw":
            self._send(reply.status, reply.body, content_type=reply.content_type)
        elif reply.kind == "answer":
            if reply.seconds:
                owner._stopping.wait(reply.seconds)
            tokens = reply.input_tokens
            if tokens is None:
                tokens = prompt_tokens(request, drops_system=owner.drops_system)
            self._send(200, _answer_body(self.path, reply, request, len(owner.requests), tokens))
        else:
            kind = "rate_limit_error" if reply.status == 429 else "api_error"
            self._send(reply.status, _error_body(self.path, kind, reply.text), reply.headers)

    def _send(
        self,
        status: int,
        body: bytes,
        headers: Iterable[tuple[str, str]] = (),
        *,
        content_type: str = "application/json",
    ) -> None:
        try:
            self.send_response(status)
            self.send_header("content-type", content_type)
            self.send_header("content-length", str(len(body)))
            for name, value in headers:
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)
        except OSError:
            pass  # the client gave up (timed out); nothing to tell it


def prompt_tokens(request: RecordedRequest, *, drops_system: bool = False) -> int:
    """The prompt's tokens as this server counts them: 4 characters of the messages a token."""
    read = [t for role, t in request.messages() if not (drops_system and role == "system")]
    return math.ceil(sum(len(text) for text in read) / 4)


def _answer_body(
    path: str, reply: Reply, request: RecordedRequest, number: int, input_tokens: int
) -> bytes:
    try:
        model = request.json().get("model", "scripted")
    except (ValueError, AttributeError):
        model = "scripted"
    if path == OPENAI_PATH:
        data: dict[str, Any] = {
            "id": reply.reply_id or f"chatcmpl-scripted-{number}",
            "object": "chat.completion",
            "created": 0,
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": reply.text},
                    "finish_reason": "stop",
                }
            ],
            "usage": {
                "prompt_tokens": input_tokens,
                "completion_tokens": reply.output_tokens,
                "total_tokens": input_tokens + reply.output_tokens,
            },
        }
        if reply.fingerprint is not None:
            data["system_fingerprint"] = reply.fingerprint
    else:
        data = {
            "id": reply.reply_id or f"msg_scripted_{number}",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [{"type": "text", "text": reply.text}],
            "stop_reason": "end_turn",
            "usage": {"input_tokens": input_tokens, "output_tokens": reply.output_tokens},
        }
    return json.dumps(data).encode("utf-8")


def _error_body(path: str, kind: str, message: str) -> bytes:
    if path == ANTHROPIC_PATH:
        data: dict[str, Any] = {"type": "error", "error": {"type": kind, "message": message}}
    else:
        data = {"error": {"message": message, "type": kind, "code": None}}
    return json.dumps(data).encode("utf-8")


# --- a judge that echoes ----------------------------------------------------------------------

EchoStyle = Literal[
    "prompt",
    "answer",
    "answer_then_verdict",
    "material_object",
    "respaced_object",
    "fenced_object",
    "unescaped_object",
]


def echo(style: EchoStyle = "prompt", *, drops_system: bool = False) -> Responder:
    """A responder that behaves like a small model repeating its input.

    ``prompt``: the whole prompt (instructions and user turn). ``answer``: the text of the
    ``<answer>`` block. ``answer_then_verdict``: that text, then the echoer's own
    ``{"verdict": "fail", ...}``. ``material_object``: the last JSON object in the prompt,
    copied verbatim (what a grammar-constrained echoer produces: the injected verdict, or the
    instructions' example); ``respaced_object``: that object re-serialised; ``fenced_object``:
    it inside a fenced json block; ``unescaped_object``: the last object once escaped quotes are
    read as quotes (a verdict carried as a JSON string inside a fake reply, taken out of it).
    Where the prompt holds no object, the echoer says fail for itself. Its own verdict is
    always fail, so any pass a judge reads from it is not one it gave.
    """

    def respond(request: RecordedRequest) -> Reply:
        parts = [t for r, t in request.messages() if not (drops_system and r == "system")]
        prompt = "\n\n".join(parts)
        own = json.dumps({"verdict": "fail", "reason": "the echoing judge's own verdict"})
        if style == "prompt":
            return answer(prompt)
        found = re.search(r"<answer>\n(.*)\n</answer>", prompt, flags=re.DOTALL)
        answer_text = found.group(1) if found else prompt
        if style == "answer":
            return answer(answer_text)
        if style == "answer_then_verdict":
            return answer(f"{answer_text}\n\n{own}")
        last = _last_object(prompt.replace('\\"', '"') if style == "unescaped_object" else prompt)
        if last is None:
            return answer(own)
        text, obj = last
        if style in ("material_object", "unescaped_object"):
            return answer(text)
        if style == "respaced_object":
            return answer(json.dumps(obj, indent=1))
        return answer(f"```json\n{text}\n```")

    return respond


def _last_object(text: str) -> tuple[str, Any] | None:
    decoder = json.JSONDecoder()
    last: tuple[str, Any] | None = None
    for match in re.finditer(r"\{", text):
        try:
            obj, end = decoder.raw_decode(text, match.start())
        except ValueError:
            continue
        if isinstance(obj, dict):
            last = (text[match.start() : end], obj)
    return last


# --- in-process stand-ins ----------------------------------------------------------------------


class ScriptedProvider:
    """A provider without HTTP: replies with the given texts in order, or ``respond(system, user)``.

    ``calls`` records each ``(system, user)`` pair it was asked, ``schemas`` the reply schema
    each call asked for (None when none).
    """

    def __init__(
        self,
        replies: Iterable[str] = (),
        *,
        respond: Callable[[str, str], str] | None = None,
        usage: Usage | None = None,
    ) -> None:
        self._replies: deque[str] = deque(replies)
        self._respond = respond
        self._usage = usage
        self.calls: list[tuple[str, str]] = []
        self.schemas: list[Mapping[str, Any] | None] = []

    async def complete(
        self, system: str, user: str, *, schema: Mapping[str, Any] | None = None
    ) -> Completion:
        self.calls.append((system, user))
        self.schemas.append(schema)
        if self._replies:
            text = self._replies.popleft()
        elif self._respond is not None:
            text = self._respond(system, user)
        else:
            raise RuntimeError("ScriptedProvider has no reply left")
        # Without a usage given, the prompt is counted as a server would: 4 characters a token.
        usage = self._usage or Usage(math.ceil((len(system) + len(user)) / 4), 20)
        return Completion(text=text, usage=usage, reply_id=f"scripted-{len(self.calls)}")


@dataclass
class ScriptedJudge:
    """An ``AsyncEvaluator`` that returns the verdict you give it for each case id.

    ``verdicts`` maps case ids to verdicts (or to True/False for pass/fail); a case it does
    not name gets ``default``, or ``missing: not_scripted``. ``identity`` lands in ``spec()``,
    so two scripted judges with different identities are different judges.
    """

    verdicts: Mapping[str, Verdict | bool] = field(default_factory=dict)
    criterion: str = "scripted"
    kind: MetricKind = "pass_fail"
    identity: str = "scripted-judge"
    default: Verdict | None = None
    seen: list[str] = field(default_factory=list)

    def spec(self) -> dict[str, Any]:
        return {"type": "scripted_judge", "criterion": self.criterion, "identity": self.identity}

    async def ajudge(self, view: CaseView) -> Verdict:
        self.seen.append(view.case_id)
        given = self.verdicts.get(view.case_id)
        if isinstance(given, bool):
            return Verdict.passed() if given else Verdict.failed("scripted")
        if given is not None:
            return given
        return self.default or Verdict.missing("not_scripted")
