"""A configured secret that a server echoes escaped is redacted like one echoed as it is.

Three real setups, each through the real CLI against a real server on 127.0.0.1:

- An ``http`` system sends three values read from the environment (a token with ``/`` and
  ``+``, a passphrase with spaces and quotes, a value with two spaces in a row and a tab), and
  the server echoes them back in the forms servers write them: JSON with its optional ``\\/``
  escape (PHP's ``json_encode``), ``\\uXXXX`` escapes of every character (upper-case hex, as
  Java encoders write) or of some (lower-case), percent-encoded in a URL it quotes, as HTML
  character references (Go's ``html/template``), inside JSON text quoted in the answer, far
  enough into an error body that the excerpt the error keeps ends inside the escaped token,
  and escaped twice over: a page Go's ``html/template`` writes (``+`` as ``&#43;``) quoted by
  its ``encoding/json`` (``&`` as ``\\u0026``), and JSON PHP writes (``/`` as ``\\/``) put in
  a URL by its ``urlencode`` (``%5C%2F``). The third value is echoed as it is in a plain-text
  error, whose excerpt is put on one line. Each form is kept verbatim where a body is quoted as
  it came: the excerpt of an error body, a body that is not JSON, a string of the answer.
- The judge_gate example's judge repeats its API key escaped: in a valid verdict's reason, in a
  malformed reply (kept as it came) and in the body of a refusal (quoted in the error).
- The same judge refuses with its key, which holds two spaces and a tab, as it is in a
  plain-text body, whose message the error puts on one line.

Afterwards no form of any of them is in the ledger's file, in what the commands print, in the
CSV export or in an archive; ``[redacted]`` stands in each one's place, and the run report
counts them. (Before, a form escaped twice over was stored and shown as the server sent it,
and so was a value holding whitespace that an error's excerpt or message put on one line,
with single spaces; ``Redacted:`` did not count them.)
"""

from __future__ import annotations

import html
import json
import re
import urllib.parse
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from tests.support import (
    QuietHandler,
    Result,
    echo_http_config,
    oloproof,
    served_project,
    serving_judge_gate,
)

from oloproof.testing import Reply, raw, verdict

TOKEN = "sk-live/ABCDEF123456+xyz"
PASSPHRASE = 'open "sesame" 4/2 now'
SPACED = "open  sesame-42\tnow"  # two spaces in a row, and a tab
ENV = {"PROBE_TOKEN": TOKEN, "PROBE_PASSPHRASE": PASSPHRASE, "PROBE_SPACED": SPACED}
CONFIG = echo_http_config(
    'Authorization: "Bearer ${{PROBE_TOKEN}}"',
    'X-Passphrase: "${{PROBE_PASSPHRASE}}"',
    'X-Spaced: "${{PROBE_SPACED}}"',
)


def slashed(value: str) -> str:
    """``value`` in JSON as PHP writes it: ``/`` escaped as ``\\/``."""
    return json.dumps(value)[1:-1].replace("/", "\\/")


def u_escaped(value: str, which: Callable[[int], bool], upper: bool) -> str:
    """``value`` with the characters at the positions ``which`` accepts as ``\\uXXXX``."""
    hex_form = "\\u%04X" if upper else "\\u%04x"
    return "".join(hex_form % ord(c) if which(i) else c for i, c in enumerate(value))


def percent_lower(value: str) -> str:
    """``value`` percent-encoded whole, with lower-case hex digits."""
    return re.sub(r"%[0-9A-F]{2}", lambda m: m.group().lower(), urllib.parse.quote(value, safe=""))


def html_refs(value: str) -> str:
    """``value`` as Go's html/template writes text: ``+`` as ``&#43;``, quotes escaped."""
    return html.escape(value).replace("+", "&#43;")


def go_json(text: str) -> str:
    """``text`` as a JSON string Go's encoding/json writes it: ``<``, ``>`` and ``&`` as
    ``\\u003c``, ``\\u003e`` and ``\\u0026``, its default."""
    escapes = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026"}
    return re.sub("[<>&]", lambda m: escapes[m.group()], json.dumps(text))


def php_query(value: str) -> str:
    """``value`` as PHP puts a JSON string in a URL: ``json_encode`` (``/`` as ``\\/``), then
    ``urlencode`` (``+`` for a space)."""
    return urllib.parse.quote_plus(slashed(value), safe="")


def every_other(i: int) -> bool:
    return i % 2 == 0


ALL_UPPER = u_escaped(TOKEN, lambda i: True, upper=True)
EVERY_OTHER = u_escaped(TOKEN, every_other, upper=False)
# The 200-character excerpt of this body's error ends 40 characters into the escaped token.
CUT_PAD = 200 - len('{"error": "') - 40

# Each case's reply, (status, body), made from the token, the passphrase and the spaced value it
# was sent.
REPLIES: dict[str, Callable[[str, str, str], tuple[int, str]]] = {
    "slash_500": lambda t, p, s: (500, '{"error": "bad key ' + slashed(t) + '"}'),
    "all_u_502": lambda t, p, s: (502, '{"error": "bad key ' + ALL_UPPER + '"}'),
    "some_u_400": lambda t, p, s: (400, '{"error": "bad key ' + EVERY_OTHER + '"}'),
    "percent_401": lambda t, p, s: (
        401,
        json.dumps(
            {
                "error": "refused",
                "retry": "/answer?key="
                + percent_lower(t)
                + "&pass="
                + urllib.parse.quote_plus(p, safe=""),
            }
        ),
    ),
    "html_403": lambda t, p, s: (403, f"<p>key {html_refs(t)} and {html_refs(p)}</p>"),
    "not_json_200": lambda t, p, s: (200, "<html>key=" + slashed(t) + "</html>"),
    "quoted_json_200": lambda t, p, s: (
        200,
        json.dumps({"result": {"answer": '{"key": "' + slashed(t) + '"}'}}),
    ),
    "cut_503": lambda t, p, s: (503, '{"error": "' + "p" * CUT_PAD + ALL_UPPER + '"}'),
    # Go: html/template writes the page, then encoding/json quotes it.
    "go_401": lambda t, p, s: (
        401,
        '{"error": ' + go_json(f"<p>bad key {html_refs(t)} and {html_refs(p)}</p>") + "}",
    ),
    "php_400": lambda t, p, s: (
        400,
        json.dumps({"retry": f"/cb?state={php_query(t)}&pass={php_query(p)}"}),
    ),
    # Plain text, whose excerpt is put on one line.
    "spaced_400": lambda t, p, s: (400, f"refused:\n  {s}  is not a key\n"),
}
# Every form of either value that some reply holds, as stored verbatim before.
FORMS = [
    slashed(TOKEN),
    ALL_UPPER,
    EVERY_OTHER,
    percent_lower(TOKEN),
    urllib.parse.quote_plus(PASSPHRASE, safe=""),
    html_refs(TOKEN),
    html_refs(PASSPHRASE),
    ALL_UPPER[:40],  # what the excerpt of cut_503 kept of it
    go_json(html_refs(TOKEN))[1:-1],
    go_json(html_refs(PASSPHRASE))[1:-1],
    php_query(TOKEN),
    php_query(PASSPHRASE),
    SPACED,
    " ".join(SPACED.split()),  # as the excerpt of an error put it on one line
    "ABCDEF123456",  # the token's middle, as every form but the \u ones holds it
]


class Echo(QuietHandler):
    """Answers each case as ``REPLIES`` says for the case's ``mode``."""

    def do_POST(self) -> None:
        mode = json.loads(self.rfile.read(int(self.headers["Content-Length"])))["mode"]
        token = self.headers["Authorization"].removeprefix("Bearer ")
        status, body = REPLIES[mode](token, self.headers["X-Passphrase"], self.headers["X-Spaced"])
        self.reply(status, body.encode())


@pytest.fixture
def echo_project(tmp_path: Path) -> Iterator[Path]:
    cases = [
        {"id": mode, "input": {"mode": mode}, "expected": {"answer": "ok"}} for mode in REPLIES
    ]
    with served_project(tmp_path / "echo", Echo, CONFIG, cases) as root:
        yield root


def assert_no_form(where: str, data: bytes) -> None:
    for form in (TOKEN, PASSPHRASE, *FORMS):
        assert form.encode() not in data, f"{form!r} in {where}"


def test_every_escaped_echo_is_redacted_wherever_it_is_kept(
    echo_project: Path, tmp_path: Path
) -> None:
    run = oloproof("run", "--json", cwd=echo_project, env=ENV)
    assert run.code == 0, run.err
    report = json.loads(run.out)
    # Each form once in each reply, except cut_503's, which its excerpt leaves out whole; an
    # error is stored twice (with the execution and with the case's result).
    assert report["redacted"] == 2 * (1 + 1 + 1 + 2 + 2 + 1 + 2 + 2 + 1) + 1, report
    run_id = report["run_id"]
    shown = {
        mode: oloproof("inspect", run_id, "--case", mode, cwd=echo_project) for mode in REPLIES
    }
    assert 'HTTP 500: {"error": "bad key [redacted]"}' in shown["slash_500"].out
    assert 'HTTP 502: {"error": "bad key [redacted]"}' in shown["all_u_502"].out
    assert 'HTTP 400: {"error": "bad key [redacted]"}' in shown["some_u_400"].out
    assert "/answer?key=[redacted]&pass=[redacted]" in shown["percent_401"].out
    assert "HTTP 403: <p>key [redacted] and [redacted]</p>" in shown["html_403"].out
    assert "<html>key=[redacted]</html>" in shown["not_json_200"].out
    assert 'answer: {"key": "[redacted]"}' in shown["quoted_json_200"].out
    assert (
        'HTTP 401: {"error": "\\u003cp\\u003ebad key [redacted] and [redacted]\\u003c/p\\u003e"}'
        in shown["go_401"].out
    )
    assert 'HTTP 400: {"retry": "/cb?state=[redacted]&pass=[redacted]"}' in shown["php_400"].out
    assert "HTTP 400: refused: [redacted] is not a key" in shown["spaced_400"].out
    # The excerpt stops before the escaped token instead of keeping its first characters.
    assert f'HTTP 503: {{"error": "{"p" * CUT_PAD}…' in shown["cut_503"].out
    failures = oloproof("inspect", run_id, "--failures", cwd=echo_project)
    # quoted_json_200's answer held the key: it errors (SecretInAnswer) where it failed its
    # check, its error saying "[redacted]" in its own words beside the answer's one.
    assert failures.out.count("[redacted]") == 15, failures.out
    exported = oloproof("export", run_id, "--format", "csv", "--output", "csv", cwd=echo_project)
    archive = tmp_path / "echo.oloarchive"
    archived = oloproof("ledger", "export", "--all", "--to", str(archive), cwd=echo_project)
    assert exported.code == 0 and archived.code == 0, (exported.err, archived.err)
    printed: list[Result] = [run, *shown.values(), failures, exported, archived]
    assert_no_form("what was printed", "".join(r.out + r.err for r in printed).encode())
    assert_no_form("the ledger", (echo_project / ".oloproof" / "ledger" / "data.mdb").read_bytes())
    for table in sorted((echo_project / "csv").iterdir()):
        assert_no_form(table.name, table.read_bytes())
    assert_no_form("the archive", archive.read_bytes())


JUDGE_KEY = "sk-judge/gate+SECRET-5f3a9c"


def judge_reply(kind: str, key: str) -> Reply:
    """A reply of the judge_gate example's judge server holding ``key`` escaped: in a valid
    verdict's reason that quotes JSON text, in a malformed reply (kept as it came), or in the
    plain-text body of a refusal (quoted in the error)."""
    if kind == "reason":
        return verdict(True, reason='saw {"key": "' + u_escaped(key, every_other, False) + '"}')
    if kind == "malformed":
        content = json.dumps({"verdict": "pass", "reason": "stated"})
        choices = json.dumps([{"message": {"role": "assistant", "content": content}}])
        body = '{"id": "' + u_escaped(key, lambda i: True, True) + f'", "choices": {choices}'
        return raw(body + ', "usage": [1, 2]}', content_type="application/json")
    return raw(f"key={percent_lower(key)} refused", status=400)


# Each kind of reply: how many occurrences each case's judgment replaces (the completion's
# text once; a refusal's body twice, in its error and as the reply kept), and how the judgment
# shows the key's place.
JUDGE_KINDS = {
    "reason": (1, '"explanation": "saw {\\"key\\": \\"[redacted]\\"}"'),
    "malformed": (1, '"raw_reply": "{\\"id\\": \\"[redacted]\\", '),
    "refused": (2, '"raw_reply": "key=[redacted] refused"'),
}


@pytest.mark.parametrize("kind", list(JUDGE_KINDS))
def test_a_judge_echoing_its_key_escaped(tmp_path: Path, kind: str) -> None:
    per_case, stored = JUDGE_KINDS[kind]
    with serving_judge_gate(tmp_path) as (root, server):
        server.default = lambda request: judge_reply(
            kind, request.headers["authorization"].removeprefix("Bearer ")
        )
        run = oloproof("run", "--json", cwd=root, env={"JUDGE_GATE_KEY": JUDGE_KEY})
        assert run.code in (0, 3), run.err
        report = json.loads(run.out)
        assert report["redacted"] == 12 * per_case, report  # the example has 12 cases
        case = oloproof("inspect", report["run_id"], "--case", "sync_interval", cwd=root)
        found = re.search(r"groundedness: \S+(?: \(\w+\))?  (sha256:\S+)", case.out)
        assert found is not None, case.out
        shown = oloproof("inspect", found.group(1), cwd=root)
        assert stored in shown.out, shown.out
        archive = tmp_path / "judge.oloarchive"
        exported = oloproof("ledger", "export", report["run_id"], "--to", str(archive), cwd=root)
        assert exported.code == 0, exported.err
        forms = [
            JUDGE_KEY,
            u_escaped(JUDGE_KEY, every_other, False),
            u_escaped(JUDGE_KEY, lambda i: True, True),
            percent_lower(JUDGE_KEY),
            "SECRET-5f3a9c",
        ]
        printed = "".join(r.out + r.err for r in (run, case, shown, exported)).encode()
        for where, data in [
            ("what was printed", printed),
            ("the ledger", (root / ".oloproof" / "ledger" / "data.mdb").read_bytes()),
            ("the archive", archive.read_bytes()),
        ]:
            for form in forms:
                assert form.encode() not in data, f"{form!r} in {where}"


def test_a_judge_key_holding_whitespace_refused_in_plain_text(tmp_path: Path) -> None:
    # The refusal's message is put on one line in the error; the key's two spaces and tab
    # are kept there, so the key is still recognised (before, the error held it with single
    # spaces, as it is nowhere else, and it was stored so).
    key = "sk-judge  gate\tSECRET-5f3a9c"
    with serving_judge_gate(tmp_path) as (root, server):
        server.default = lambda request: raw(
            "refused:\n  key "
            + request.headers["authorization"].removeprefix("Bearer ")
            + "  is not valid\n",
            status=400,
        )
        run = oloproof("run", "--json", cwd=root, env={"JUDGE_GATE_KEY": key})
        assert run.code in (0, 3), run.err
        report = json.loads(run.out)
        assert report["redacted"] == 12 * 2, report  # in the error and in the reply kept
        case = oloproof("inspect", report["run_id"], "--case", "sync_interval", cwd=root)
        found = re.search(r"groundedness: \S+(?: \(\w+\))?  (sha256:\S+)", case.out)
        assert found is not None, case.out
        shown = oloproof("inspect", found.group(1), cwd=root)
        assert "HTTP 400: refused: key [redacted] is not valid" in shown.out, shown.out
        printed = "".join(r.out + r.err for r in (run, case, shown)).encode()
        ledger = (root / ".oloproof" / "ledger" / "data.mdb").read_bytes()
        for where, data in [("what was printed", printed), ("the ledger", ledger)]:
            for form in (key, " ".join(key.split()), "SECRET-5f3a9c"):
                assert form.encode() not in data, f"{form!r} in {where}"
