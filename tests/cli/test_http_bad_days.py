"""HTTP servers having a bad day in how they send a reply, through the real CLI.

A real server on 127.0.0.1 plays an ``http`` system's endpoint, a model system's model and a
judge's model, picking each reply from a ``MODE:<kind>`` the request carries. What each client
used to do:

- A body compressed in a coding Oloproof never asked for (a zstd frame of 256 MiB of zeros is
  8 KiB; gzip inside gzip does the same) was expanded whole before anything counted it: the
  run took 580 MiB for that one 8 KiB reply (4 GB for a 64 KiB one). Now that case (or that
  judgment) errors without reading it.
- A gzip stream that stopped part way, or that went on after its end, was read as the whole
  answer: the part that had arrived passed. Now that case errors.
- A model's reply had no size limit at all: a 40 MB completion was recorded as the case's
  output, and a body that never ended grew until the call's timeout (10 GB in 60 s). Now
  reading stops past 32 MiB, as for an ``http`` system, and the case or judgment says so.
- A model's reply labelled with a charset Python cannot decode it in (``utf-16`` without a byte
  order mark, ``zlib``) raised out of the client, whatever the body held: the judgment was
  ``evaluator_raised``, with a traceback stored. The body is JSON, read as UTF-8 whatever the
  label says; a verdict so labelled is read, an error status so labelled is an HTTP error.
- A 429 asking an ``http`` system to retry after a day (or never: ``inf``) held the case until
  the run's case timeout, recorded as slow with the server's 429 lost. Past 60 s it now falls
  back to the backoff, as a judge's call does.
"""

from __future__ import annotations

import gzip
import json
import re
import subprocess
import sys
import zlib
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any, ClassVar

import pytest
import yaml
import zstandard
from tests.support import Result, http_server, oloproof

MIB = 1 << 20
LIMIT = "33,554,432 bytes"  # 32 MiB, the most of a reply either client reads
NOT_ASKED = "which Oloproof does not ask for (it asks for gzip or deflate)"


def zeros(coding: str, mebibytes: int) -> bytes:
    """``mebibytes`` MiB of zeros compressed as ``coding``: a few KiB that expand a thousandfold
    or more."""
    if coding == "zstd":
        packer: Any = zstandard.ZstdCompressor(level=3).compressobj()
    else:
        packer = zlib.compressobj(1, zlib.DEFLATED, 31)
    return b"".join(packer.compress(bytes(MIB)) for _ in range(mebibytes)) + packer.flush()


def completion(text: str) -> bytes:
    return json.dumps(
        {
            "id": "chatcmpl-1",
            "model": "m",
            "choices": [{"message": {"content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 400, "completion_tokens": 9},
        }
    ).encode()


ANSWER = json.dumps({"result": {"answer": "Paris"}}).encode()
VERDICT = completion(json.dumps({"verdict": "pass", "reason": "Paris is stated"}))
# The padding makes a stream long enough to be cut part way with the answer already whole.
PADDED = gzip.compress(ANSWER + b" " * 100_000)
BOMBS = {"zstd_bomb": ("zstd", zeros("zstd", 256))}
ENCODED: dict[str, tuple[str, bytes]] = {
    **BOMBS,
    "gzip_in_gzip_bomb": ("gzip, gzip", gzip.compress(zeros("gzip", 64))),
    "gzip_bomb": ("gzip", zeros("gzip", 64)),
    "gzip_cut": ("gzip", PADDED[: len(PADDED) // 2]),
    "gzip_then_more": ("gzip", gzip.compress(ANSWER) + gzip.compress(b' {"result": null}')),
    "deflate_not_deflate": ("deflate", ANSWER),
    "gzip_good": ("gzip", gzip.compress(ANSWER)),
    "deflate_good": ("deflate", zlib.compress(ANSWER)),
    "raw_deflate_good": ("deflate", zlib.compress(ANSWER)[2:-4]),
}
# A Retry-After no run should wait for.
PATIENCE = {
    "retry_in_a_day": "86400",
    "retry_never": "inf",
    "retry_in_2099": "Thu, 01 Jan 2099 00:00:00 GMT",
    # A year past what Python's dates hold: the HTTP system's own reader raised OverflowError
    # out of the request, and the case errored without a retry.
    "retry_past_any_date": "Mon, 01 Jan 99999999999 00:00:00 GMT",
}
CHARSETS = {"utf16_verdict": (200, "utf-16"), "zlib_503": (503, "zlib")}
# Redirects, each to where its Location header points (a query and a user name that may hold a
# key, a relative path, none at all).
REDIRECTS = {
    "moved": (308, "http://user:pw@models.example:8443/v1/chat/completions?sig=k-0123456789"),
    "relative": (307, "/v2/chat/completions"),
    "nowhere": (301, None),
}


class BadDay(BaseHTTPRequestHandler):
    """Answers each POST as the ``MODE:<kind>`` in its body asks; any other body gets a good
    reply (the answer at ``/answer``, a passing verdict elsewhere). A kind in ``PATIENCE`` is a
    429 asking for that wait the first time it is asked for, then the answer."""

    protocol_version = "HTTP/1.1"
    asked: ClassVar[set[str]] = set()

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        request = self.rfile.read(int(self.headers["Content-Length"]))
        found = re.search(rb"MODE:(\w+)", request)
        kind = found[1].decode() if found else "good"
        self.close_connection = True
        status, body = 200, ANSWER if self.path == "/answer" else VERDICT
        content_type = "application/json"
        headers = {"Connection": "close"}
        if kind == "endless":
            return self._endless()
        if kind == "huge_completion":
            body = completion("x" * (40 * MIB))
        elif kind in ENCODED:
            headers["Content-Encoding"], body = ENCODED[kind]
        elif kind in CHARSETS:
            status, charset = CHARSETS[kind]
            content_type += f"; charset={charset}"
            if status != 200:
                body = b'{"error": {"message": "overloaded"}}'
        elif kind in REDIRECTS:
            status, location = REDIRECTS[kind]
            body = b""
            if location is not None:
                headers["Location"] = location
        elif kind in PATIENCE and kind not in BadDay.asked:
            BadDay.asked.add(kind)
            status, body = 429, b'{"error": "slow down"}'
            headers["Retry-After"] = PATIENCE[kind]
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def _endless(self) -> None:
        """A chunked body that never ends, until the client hangs up."""
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        piece = b" " * MIB
        try:
            while True:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
        except OSError:
            pass  # the client stopped reading


@pytest.fixture
def base() -> Iterator[str]:
    BadDay.asked = set()
    with http_server(BadDay) as url:
        yield url


def write_project(root: Path, system: dict[str, Any], kinds: list[str], **judge: Any) -> Path:
    """A project of one case per kind (its input and answer carry ``MODE:<kind>``), with the
    judge ``judge`` when given and the contains check otherwise."""
    root.mkdir(parents=True, exist_ok=True)
    cases = [
        {
            "id": kind,
            "input": {"question": f"MODE:{kind}", "reply": f"MODE:{kind}"},
            "expected": {"answer": "Paris"},
        }
        for kind in kinds
    ]
    (root / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    check = {"type": "contains", "criterion": "correct", "expected_field": "answer"}
    if system.get("http"):
        check["field"] = "answer"
    config = {
        "system": system,
        "evaluators": [judge or check],
        "timeout_s": 10,
    }
    (root / "oloproof.yaml").write_text(yaml.safe_dump(config))
    return root


def http_system(base: str) -> dict[str, Any]:
    settings = {"url": f"{base}/answer", "output_path": "result", "retries": 1, "backoff_s": 0.01}
    return {"name": "bad-day", "version": "1", "http": settings}


def model_system(base: str) -> dict[str, Any]:
    settings = {
        "provider": "openai",
        "model": "m",
        "base_url": f"{base}/v1",
        "api_key_env": None,
        "prompt": "Answer: {{ question }}",
        "max_retries": 0,
    }
    return {"name": "bad-day-model", "version": "1", "model": settings}


APP = """
from oloproof import system


@system(name="echo", version="1")
def answer(case_input):
    return {"answer": case_input["question"]}
"""


def judged_project(root: Path, base: str, kinds: list[str]) -> Path:
    """A callable system that answers each case's ``MODE:<kind>``, judged by the server."""
    root.mkdir(parents=True)
    (root / "app.py").write_text(APP)
    judge = {
        "type": "answer_judge",
        "provider": "openai",
        "model": "m",
        "base_url": f"{base}/v1",
        "api_key_env": None,
        "max_retries": 0,
        "timeout_s": 5,
    }
    system = {"name": "echo", "version": "1", "callable": "app:answer"}
    return write_project(root, system, kinds, **judge)


# Runs the command given after it and reports its peak memory (kB) as stderr's last line.
PEAK = (
    "import resource, subprocess, sys; code = subprocess.call(sys.argv[1:]); "
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr); "
    "sys.exit(code)"
)


def run_measured(root: Path) -> tuple[Result, float]:
    """``oloproof run`` in ``root``, and the most memory it held at once, in MiB."""
    proc = subprocess.run(
        [sys.executable, "-c", PEAK, sys.executable, "-m", "oloproof", "run"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
    )
    *err, peak = proc.stderr.splitlines()
    assert "Traceback" not in proc.stderr
    return Result(proc.returncode, proc.stdout, "\n".join(err)), int(peak) / 1024


def failures(root: Path) -> dict[str, dict[str, Any]]:
    """Each case ``inspect latest --failures --json`` lists, by id."""
    shown = oloproof("inspect", "latest", "--failures", "--json", cwd=root)
    assert shown.code == 0, shown.err
    return {case["case_id"]: case for case in json.loads(shown.out)["failed"]}


def judgment(root: Path, case_id: str) -> dict[str, Any]:
    """The body of the one judgment of ``case_id`` (its status, reason, detail)."""
    shown = oloproof("inspect", "latest", "--case", case_id, "--json", cwd=root)
    assert shown.code == 0, shown.err
    (address,) = json.loads(shown.out)["judgments"].values()
    event = oloproof("inspect", address, "--json", cwd=root)
    assert event.code == 0, event.err
    return dict(json.loads(event.out)["body"])


# --- an http system -------------------------------------------------------------------------


def test_a_compressed_body_errors_its_case_without_filling_memory(
    tmp_path: Path, base: str
) -> None:
    kinds = ["good", *ENCODED]
    root = write_project(tmp_path, http_system(base), kinds)
    done, peak = run_measured(root)
    assert done.code == 0, done.out + done.err
    good = ["good", "gzip_good", "deflate_good", "raw_deflate_good"]
    assert f"{len(good)} / {len(good)} observed · {len(kinds) - len(good)} missing" in done.out
    answered = f"POST {base}/answer answered HTTP 200 with a body that "
    expected = {
        "zstd_bomb": f"is in Content-Encoding zstd, {NOT_ASKED}",
        "gzip_in_gzip_bomb": f"is in Content-Encoding gzip, gzip, {NOT_ASKED}",
        "gzip_cut": "stops part way through its gzip stream",
        "gzip_then_more": "goes on after the end of its gzip stream",
        "deflate_not_deflate": "is not the deflate data it says it is",
    }
    errors = {key: case["error"]["message"] for key, case in failures(root).items()}
    assert sorted(errors) == sorted([*expected, "gzip_bomb"])
    for kind, what in expected.items():
        assert errors[kind] == f"case {kind!r}: {answered}{what}", errors[kind]
    assert errors["gzip_bomb"] == (
        f"case 'gzip_bomb': POST {base}/answer answered with more than {LIMIT}, more than any "
        "answer Oloproof records; it stopped reading"
    )
    # The run itself takes about 70 MiB; the gzip bomb is read up to the limit (32 MiB), the
    # others not at all. Before, the zstd body alone took 580 MiB (its 256 MiB, decoded whole).
    assert peak < 200, peak


def test_a_429_asking_for_a_wait_past_a_minute_falls_back_to_the_backoff(
    tmp_path: Path, base: str
) -> None:
    # Each case sat out its whole timeout (10 s here, 120 by default) and was recorded as
    # "the case took longer than 10 s", the server's 429 lost.
    root = write_project(tmp_path, http_system(base), list(PATIENCE))
    done = oloproof("run", cwd=root, timeout=60)
    assert done.code == 0, done.out + done.err
    assert f"{len(PATIENCE)} / {len(PATIENCE)} observed · 0 missing" in done.out, done.out


# --- a model system and a judge ---------------------------------------------------------------


def test_a_model_reply_past_the_size_limit_or_undecodable_errors_its_case(
    tmp_path: Path, base: str
) -> None:
    kinds = ["good", "huge_completion", "endless", *BOMBS, "gzip_cut"]
    root = write_project(tmp_path, model_system(base), kinds)
    done, peak = run_measured(root)
    assert done.code == 0, done.out + done.err
    assert f"1 / 1 observed · {len(kinds) - 1} missing" in done.out, done.out
    what = f"openai model m at {base}/v1/chat/completions: the reply's body "
    expected = {
        "huge_completion": f"is larger than {LIMIT}",
        "endless": f"is larger than {LIMIT}",
        "zstd_bomb": f"is in Content-Encoding zstd, {NOT_ASKED}",
        "gzip_cut": "stops part way through its gzip stream",
    }
    failed = failures(root)
    assert sorted(failed) == sorted(expected)
    for kind, why in expected.items():
        assert failed[kind]["status"] == "errored", failed[kind]
        assert failed[kind]["error"]["message"] == what + why
    # Before: the 40 MB completion was the recorded output, and the endless body grew until
    # the call's timeout.
    assert peak < 200, peak


def test_a_judge_reply_past_the_size_limit_or_undecodable_is_malformed(
    tmp_path: Path, base: str
) -> None:
    root = judged_project(tmp_path / "p", base, ["endless", *BOMBS])
    done, peak = run_measured(root)
    assert done.code == 0, done.out + done.err
    assert "answer_equivalent: 2 missing: 2 judge_malformed_response" in done.lines, done.out
    what = f"openai model m at {base}/v1/chat/completions: the reply's body "
    assert judgment(root, "endless")["detail"]["error"] == what + f"is larger than {LIMIT}"
    assert judgment(root, "zstd_bomb")["detail"]["error"] == (
        what + f"is in Content-Encoding zstd, {NOT_ASKED}"
    )
    assert peak < 200, peak


def test_a_reply_labelled_with_an_odd_charset_is_read_as_the_json_it_is(
    tmp_path: Path, base: str
) -> None:
    # Both were evaluator_raised (UnicodeError: UTF-16 stream does not start with BOM, and an
    # AssertionError from the zlib codec), a traceback stored.
    root = judged_project(tmp_path / "p", base, list(CHARSETS))
    done = oloproof("run", cwd=root)
    assert done.code == 0, done.out + done.err
    assert "answer_equivalent: 1 missing: 1 judge_http_error" in done.lines, done.out
    assert judgment(root, "utf16_verdict")["status"] == "pass"
    refused = judgment(root, "zlib_503")
    assert refused["detail"]["status"] == 503
    assert refused["detail"]["error"].endswith("/v1/chat/completions: HTTP 503: overloaded")


def test_a_redirect_says_where_it_points_and_why_it_is_not_followed(
    tmp_path: Path, base: str
) -> None:
    # Was: "HTTP 308" and nothing more, the redirect's target and the remedy unsaid.
    root = judged_project(tmp_path / "p", base, list(REDIRECTS))
    done = oloproof("run", cwd=root)
    assert done.code == 0, done.out + done.err
    assert "answer_equivalent: 3 missing: 3 judge_http_error" in done.lines, done.out
    why = (
        ", not followed: a call carries the key, which goes to base_url alone; if the model is "
        "served there, set base_url to it"
    )
    said = {kind: judgment(root, kind)["detail"]["error"] for kind in REDIRECTS}
    what = f"openai model m at {base}/v1/chat/completions: HTTP "
    assert said == {
        "moved": what + "308; a redirect to http://models.example:8443/v1/chat/completions" + why,
        "relative": what + f"307; a redirect to {base}/v2/chat/completions" + why,
        "nowhere": what + "301; a redirect" + why,
    }
    assert "k-0123456789" not in json.dumps(said) and "pw" not in json.dumps(said)
