"""The system's own credentials are never stored or printed, whoever repeats them.

Oloproof kept out the secrets it reads itself (an HTTP system's header, a judge's key). A
callable system reads its own: an API key from the environment, sent as a query parameter as
several hosted APIs take it. When the API refused a request, the client's error named the URL,
key and all (httpx: ``Client error '403 Forbidden' for url 'http://…/search?key=…'``); the case
errored with that message, and the key was stored in the ledger and shown by ``inspect``, the
export and the viewer, and printed by a system that logged it.

The values of environment variables named like credentials (``*_API_KEY``, ``*_TOKEN``,
``*SECRET``, ``*PASSWORD``…) are now kept out as configured secrets are, and the project file's
``secrets:`` names any others.
"""

from __future__ import annotations

import json
from http import HTTPStatus
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest
from tests.support import QuietHandler, http_server, oloproof, stored_bytes

KEY = "AIzaSy-search-KEY-7d41c2f09b"
PASSWORD = "hunter2-db-Pa55w0rd"

APP = """
import os

import httpx

from oloproof import system

URL = os.environ["SEARCH_URL"]
print("using key", os.environ["{name}"])


@system(name="s", version="1")
def answer(case):
    reply = httpx.get(URL, params={{"key": os.environ["{name}"], "q": case["q"]}})
    reply.raise_for_status()
    return reply.json()
"""

CONFIG = """
system: {{name: s, version: "1", callable: app:answer}}
dataset: cases.jsonl
evaluators:
  - {{type: contains, criterion: answered, field: answer, expected_field: answer}}
{more}"""


class Search(QuietHandler):
    """Answers a question with its own text; refuses "refused" as a hosted API refuses a key
    (403); answers "leaky" with the key it was sent."""

    def do_GET(self) -> None:
        query = parse_qs(urlparse(self.path).query)
        question = query["q"][0]
        if question == "refused":
            self.reply(HTTPStatus.FORBIDDEN, b'{"error": "key not allowed"}')
        else:
            answer = f"echo {query['key'][0]}" if question == "leaky" else question
            self.reply(HTTPStatus.OK, json.dumps({"answer": answer}).encode())


def _project(root: Path, name: str, more: str = "") -> Path:
    root.mkdir()
    (root / "app.py").write_text(APP.format(name=name))
    (root / "oloproof.yaml").write_text(CONFIG.format(more=more))
    (root / "cases.jsonl").write_text(
        "".join(
            json.dumps({"id": q, "input": {"q": q}, "expected": {"answer": q}}) + "\n"
            for q in ("plain", "refused", "leaky")
        )
    )
    return root


@pytest.mark.parametrize(
    ("name", "secret", "more"),
    [
        ("SEARCH_API_KEY", KEY, ""),
        ("SEARCH_TOKEN", KEY, ""),
        ("PGPASSWORD", PASSWORD, ""),
        ("SEARCH_CREDENTIAL", KEY, "secrets: [SEARCH_CREDENTIAL]\n"),
    ],
)
def test_the_system_s_own_key_is_kept_out(
    tmp_path: Path, name: str, secret: str, more: str
) -> None:
    with http_server(Search) as base:
        root = _project(tmp_path / "p", name, more)
        env = {name: secret, "SEARCH_URL": base + "/search"}
        run = oloproof("run", cwd=root, env=env)
        assert run.code == 0, run.out + run.err
        failures = oloproof("inspect", "latest", "--failures", cwd=root)
        leaky = oloproof("inspect", "latest", "--case", "leaky", cwd=root)
        exported = oloproof("export", "latest", "--format", "jsonl", "--output", "out", cwd=root)
    assert "using key [redacted]" in run.err.splitlines(), run.err
    assert "Client error '403 Forbidden' for url" in failures.out, failures.out
    assert "key=%5Bredacted%5D" in failures.out or "key=[redacted]" in failures.out, failures.out
    assert "echo [redacted]" in leaky.out, leaky.out
    printed = "".join(r.out + r.err for r in (run, failures, leaky, exported))
    assert secret not in printed
    assert secret.encode() not in stored_bytes(root)
    for path in (root / "out").iterdir():
        assert secret not in path.read_text(), path


@pytest.mark.parametrize(
    ("name", "value", "more"),
    [
        ("SEARCH_PROFILE", "profile-7d41c2", ""),
        ("GOOGLE_APPLICATION_CREDENTIALS", "profile-7d41c2", ""),
        ("PGPASSWORD", "postgres", ""),
    ],
)
def test_other_values_are_left_as_they_are(
    tmp_path: Path, name: str, value: str, more: str
) -> None:
    # A variable not named like a credential, nor listed, holds none; nor does one that names
    # a file (GOOGLE_APPLICATION_CREDENTIALS: an error would lose its path); nor a value too
    # short to be a key (a local database's default password, which an answer about Postgres
    # would otherwise lose, its verdict with it).
    with http_server(Search) as base:
        root = _project(tmp_path / "p", name)
        env = {name: value, "SEARCH_URL": base + "/search"}
        run = oloproof("run", cwd=root, env=env)
        leaky = oloproof("inspect", "latest", "--case", "leaky", cwd=root)
    assert run.code == 0, run.out + run.err
    assert f"echo {value}" in leaky.out, leaky.out
    assert not any(line.startswith("Redacted: ") for line in run.lines), run.out


def test_a_short_value_is_kept_out_when_listed(tmp_path: Path) -> None:
    with http_server(Search) as base:
        root = _project(tmp_path / "p", "PGPASSWORD", "secrets: [PGPASSWORD]\n")
        env = {"PGPASSWORD": "postgres", "SEARCH_URL": base + "/search"}
        run = oloproof("run", cwd=root, env=env)
        leaky = oloproof("inspect", "latest", "--case", "leaky", cwd=root)
    assert run.code == 0, run.out + run.err
    assert "echo [redacted]" in leaky.out, leaky.out


def test_a_listed_secret_must_be_a_variable_name(tmp_path: Path) -> None:
    root = _project(tmp_path / "p", "SEARCH_API_KEY", "secrets: [SEARCH_API_KEY, 'not a name']\n")
    done = oloproof("run", cwd=root)
    assert done.code == 2, done.out + done.err
    assert done.err.startswith(f"error: {root / 'oloproof.yaml'}, line 6: secrets.1: "), done.err
    assert "not a name" not in done.err  # an entry may be a secret pasted in by mistake
    assert not (root / ".oloproof").exists()


PRIVATE_KEY = "-----BEGIN PRIVATE KEY-----\n" + "\n".join(
    f"MIIEvQIBADANBgkqhkiG9w0BAQEFAASC{i:032d}" for i in range(30)
)

ECHOES_ITS_KEY = """
import os

from oloproof import system


@system(name="s", version="1")
def answer(case):
    return {"answer": "signed with " + os.environ["SERVICE_PRIVATE_KEY"]}
"""


def test_a_long_credential_is_kept_out_as_it_is(tmp_path: Path) -> None:
    # A private key's 2,000 characters are recognised as they are (their escaped forms would
    # take seconds to compile at the start of every run: benchmarks/redaction.py).
    assert len(PRIVATE_KEY) > 256
    root = _project(tmp_path / "p", "SEARCH_API_KEY")
    (root / "app.py").write_text(ECHOES_ITS_KEY)
    run = oloproof("run", cwd=root, env={"SERVICE_PRIVATE_KEY": PRIVATE_KEY})
    assert run.code == 0, run.out + run.err
    # An answer holding it errors its case (it could not be judged as given), and the error
    # shows the answer's start, cut before the key rather than part way through it.
    assert run.lines[1].startswith("3 of 3 cases errored: SecretInAnswer: "), run.out
    shown = oloproof("inspect", "latest", "--case", "plain", cwd=root)
    assert "Its start, as stored: {answer: signed with" in shown.out, shown.out
    assert PRIVATE_KEY.encode() not in stored_bytes(root)
    assert "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC" not in shown.out + run.out
