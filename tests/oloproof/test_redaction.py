"""The central redactor: what counts as a secret, where it is replaced, what is counted."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator

import pytest

from oloproof import events as ev
from oloproof import redaction
from oloproof.redaction import REDACTED, RedactingStream, redact, redact_text, register

SECRET = 'sk-"quoted"\\slash-é'


@pytest.fixture(autouse=True)
def clean_registry() -> Iterator[None]:
    redaction.forget_all()
    yield
    redaction.forget_all()


def test_nothing_registered_costs_nothing() -> None:
    body = {"a": ["text", b"bytes"], "b": {"c": 1.5}}
    assert redact(body) is body
    assert redact_text("plain") == "plain"


def test_every_string_bytes_and_key_inside_a_body() -> None:
    register(SECRET)
    before = redaction.stored_count()
    body = {
        "output": f"it said {SECRET} twice: {SECRET}",
        "nested": [{"deep": (SECRET, 3)}, b"raw " + SECRET.encode()],
        SECRET: "a key too",
        "echoed json": json.dumps({"token": SECRET}),
        "echoed ascii json": json.dumps({"token": SECRET}, ensure_ascii=True),
        "number": 7,
    }
    cleaned = redact(body)
    assert SECRET not in json.dumps(cleaned, default=repr)
    assert cleaned["output"] == f"it said {REDACTED} twice: {REDACTED}"
    assert cleaned["nested"] == [{"deep": [REDACTED, 3]}, b"raw " + REDACTED.encode()]
    assert cleaned[REDACTED] == "a key too" and cleaned["number"] == 7
    assert cleaned["echoed json"] == json.dumps({"token": REDACTED})
    assert cleaned["echoed ascii json"] == '{"token": "[redacted]"}'
    assert redaction.stored_count() - before == 7


def test_short_values_are_not_secrets() -> None:
    register("yes")
    register("")
    register(None)
    assert redact({"a": "yes yes"}) == {"a": "yes yes"}


def test_events_are_made_redacted() -> None:
    register("token-12345678")
    event = ev.make(ev.EXECUTION, {"identity": "x", "output": "got token-12345678"})
    assert event.body["output"] == f"got {REDACTED}"
    assert b"token-12345678" not in event.to_bytes()


def test_a_stream_writes_through_the_redactor() -> None:
    target = io.StringIO()
    stream = RedactingStream(target)
    stream.write("before anything is registered: token-12345678\n")
    register("token-12345678")
    stream.write("error: the server said token-12345678\n")
    stream.writelines(["token-12345678", "\n"])
    assert target.getvalue().splitlines() == [
        "before anything is registered: token-12345678",
        f"error: the server said {REDACTED}",
        REDACTED,
    ]
    assert not hasattr(stream, "buffer")  # nothing can write around it
    assert stream.encoding and stream.writable()


def test_a_cut_never_ends_inside_a_secret() -> None:
    register(SECRET)
    escaped = json.dumps(SECRET)[1:-1]
    for form in (SECRET, escaped):
        text = f"head {form} tail"
        assert redaction.cut(text, 5) == "head "
        assert redaction.cut(text, 7) == "head "  # inside it: before it instead
        assert redaction.cut(text, 5 + len(form)) == f"head {form}"
        assert redaction.cut(text, 100) == text
    assert redaction.cut(f"{SECRET} and {SECRET}", len(SECRET) + 8) == f"{SECRET} and "
    redaction.forget_all()
    assert redaction.cut(f"head {SECRET}", 7) == f"head {SECRET}"[:7]
