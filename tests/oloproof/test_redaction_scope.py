"""How long a value a project declares is kept out: while the ``project_scope`` it was declared
in goes on (``oloproof.evaluate``, ``oloproof.diagnose``), and for as long as anything else
holds it too. The same through ``evaluate`` in a real process: tests/cli/
test_declared_secrets_in_one_process.py."""

from __future__ import annotations

import io
import threading
from collections.abc import Iterator

import attr
import pytest

from oloproof import redaction
from oloproof.redaction import REDACTED, RedactingStream, project_scope, redact, redact_text

CITY = "Amsterdam"
SAID = f"The capital is {CITY}."
KEPT_OUT = f"The capital is {REDACTED}."


@pytest.fixture(autouse=True)
def clean_registry(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("CITY", CITY)
    redaction.forget_all()
    yield
    redaction.forget_all()


def test_a_declared_value_is_kept_out_until_its_scope_ends() -> None:
    with project_scope():
        redaction.register_environment(["CITY"])
        assert redact({"answer": SAID}) == {"answer": KEPT_OUT}
        assert redact_text(SAID) == KEPT_OUT
    body = {"answer": SAID}
    assert redact(body) is body  # nothing registered is left: the fast path again
    assert redact_text(SAID) == SAID


def test_a_value_declared_outside_a_scope_is_kept_for_the_process() -> None:
    # plan_run called directly, and the command line: nothing says when the run ends.
    redaction.register_environment(["CITY"])
    with project_scope():
        redaction.register_environment(["CITY"])
    assert redact_text(SAID) == KEPT_OUT


def test_a_value_also_registered_otherwise_outlives_the_scope() -> None:
    with project_scope():
        redaction.register_environment(["CITY"])
        redaction.register(CITY)  # an adapter read it too (a header's ${CITY})
    assert redact_text(SAID) == KEPT_OUT


def test_a_value_also_named_as_a_credential_outlives_the_scope(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    value = f"{CITY}-7d41c2f09b-key"
    monkeypatch.setenv("CITY", value)
    monkeypatch.setenv("SEARCH_API_TOKEN", value)
    with project_scope():
        redaction.register_environment(["CITY"])
    assert redact_text(f"key {value}") == f"key {REDACTED}"


def test_a_declared_credential_is_recognised_escaped_whatever_its_length(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Found by its name alone, a value this long is recognised only as it is; declared too, in
    # every form, and still after its scope, as the credential it is.
    value = "/".join(["x" * 20] * 14)
    assert len(value) > redaction.ESCAPED_UP_TO
    monkeypatch.setenv("SERVICE_PRIVATE_KEY", value)
    with project_scope():
        redaction.register_environment(["SERVICE_PRIVATE_KEY"])
    assert redact_text(value.replace("/", "\\/")) == REDACTED


def test_each_scope_holds_its_own_count() -> None:
    outer = project_scope()
    outer.__enter__()
    redaction.register_environment(["CITY"])
    with project_scope():
        redaction.register_environment(["CITY"])
    assert redact_text(SAID) == KEPT_OUT  # the outer scope still holds it
    outer.__exit__(None, None, None)
    assert redact_text(SAID) == SAID


def test_a_scope_ending_in_one_thread_leaves_another_s_value_kept_out() -> None:
    held, ended = threading.Event(), threading.Event()
    seen: list[str] = []

    def run() -> None:
        with project_scope():
            redaction.register_environment(["CITY"])
            held.set()
            ended.wait(10)  # the other thread's scope has ended
            seen.append(redact_text(SAID))

    beside = threading.Thread(target=run)
    beside.start()
    held.wait(10)
    with project_scope():
        redaction.register_environment(["CITY"])
    ended.set()
    beside.join(10)
    assert seen == [KEPT_OUT]
    assert redact_text(SAID) == SAID


def test_nothing_declared_is_released_once_output_passes_a_redacting_stream() -> None:
    # The command line prints through one up to its last line: an error it ends with may
    # repeat a secret the project declared, after the run that declared it has ended.
    printed = io.StringIO()
    stream = RedactingStream(printed)
    with project_scope():
        redaction.register_environment(["CITY"])
    stream.write(f"error: {SAID}\n")
    assert printed.getvalue() == f"error: {KEPT_OUT}\n"


def test_releasing_a_value_keeps_the_count_of_what_was_replaced() -> None:
    before = redaction.stored_count()
    with project_scope():
        redaction.register_environment(["CITY"])
        redact({"answer": SAID, "expected": CITY})
    redact({"answer": SAID})
    assert redaction.stored_count() - before == 2


@attr.s(frozen=True, auto_exc=True)
class _Frozen(Exception):  # as the jsonschema stack's ``referencing`` exceptions are made
    ref: str = attr.ib()


def test_an_error_leaving_a_scope_is_redacted_and_a_frozen_one_leaves_its_chain() -> None:
    # The first version set ``args`` on each exception of the chain; a frozen one raised
    # FrozenInstanceError there, and `oloproof run` on a schema with an unresolvable $ref
    # ended in that traceback.
    with pytest.raises(ValueError) as raised, project_scope():
        redaction.register_environment(["CITY"])
        try:
            raise _Frozen(ref=SAID)
        except _Frozen:
            raise ValueError(SAID) from None
    error = raised.value
    assert error.args == (KEPT_OUT,)
    assert error.__context__ is None  # it held the value and could not be changed
