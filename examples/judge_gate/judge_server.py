"""A stand-in for an LLM judge: an OpenAI-compatible server that judges by a simple rule.

    python judge_server.py 8767

It serves ``POST /v1/chat/completions`` (and Anthropic's ``/v1/messages``) on 127.0.0.1, reads
the groundedness prompt Oloproof sends, and replies as a model would, with one JSON verdict:
``pass`` when every content word of the answer appears in the passages, ``fail`` otherwise.
That rule is a crude judge, and like any judge it makes mistakes (it fails a faithful paraphrase
that uses other words); calibration measures how often. It asks for a key, as a hosted model
would, and accepts any.

Swap it for a real model by changing ``base_url`` and ``model`` in oloproof.yaml: the judge's
identity then changes, and so must its calibration.
"""

import json
import re
import sys
import threading

from oloproof.testing import RecordedRequest, Reply, ScriptedJudgeServer, answer, fail

STOPWORDS = frozenset(
    "a an and are as at be by can do does for from how i in is it many my of on or the to what"
    " when which who will with".split()
)


def words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in STOPWORDS}


def between(text: str, tag: str) -> str:
    found = re.search(rf"<{tag}>\n(.*?)\n</{tag}>", text, flags=re.DOTALL)
    return found.group(1) if found else ""


def judge(request: RecordedRequest) -> Reply:
    """The reply to one judge request."""
    if not request.headers.get("authorization", "").startswith("Bearer ") and not request.headers.get(
        "x-api-key"
    ):
        return fail(401, "a key is required (any value will do for this stand-in)")
    prompt = request.user_message
    unsupported = sorted(words(between(prompt, "answer")) - words(between(prompt, "passages")))
    if unsupported:
        reply = {"verdict": "fail", "reason": f"not in the passages: {', '.join(unsupported)}"}
    else:
        reply = {"verdict": "pass", "reason": "every word of the answer is in the passages"}
    text = json.dumps(reply)
    return answer(text, input_tokens=len(request.body.split()), output_tokens=len(text.split()))


def make_server(port: int = 0) -> ScriptedJudgeServer:
    """The judge server, not yet started (``port`` 0 takes a free one)."""
    return ScriptedJudgeServer(default=judge, port=port)


if __name__ == "__main__":
    server = make_server(int(sys.argv[1]) if len(sys.argv) > 1 else 8767).start()
    print(f"judge listening on {server.openai_base_url} (Ctrl-C to stop)", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        server.close()
