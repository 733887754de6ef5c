"""The black-box application behind HTTP, for `oloproof run --config oloproof.http.yaml`.

    python server.py 8766

POST /answer takes the case input as its JSON body ({"question": "..."}) and returns the answer
under "result" and, under "evidence", what the application retrieved, put in the prompt and cited,
already in the shapes of Oloproof's retrieval/v1, context/v1 and citations/v1 artifacts. In your
own service this evidence is usually a debug field switched on for evaluation traffic.

It wraps the same ``support_api`` as app.py, so both routes record identical artifacts.
"""

import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from app import PROMPT_WORD_BUDGET, SEARCH_DEPTH, support_api


def evidence(question: str, response: dict) -> dict:
    """Map the application's response onto the three artifact shapes."""
    return {
        "retrieval": {
            "query": question,
            "depth": SEARCH_DEPTH,
            "candidates": [
                {"doc_id": s["id"], "score": s["score"], "text": s["text"]}
                for s in response["sources"]
            ],
        },
        "context": {
            "items": [
                {"doc_id": i["id"], "position": i["rank"], "tokens": i["tokens"], "text": i["text"]}
                for i in response["prompt_sources"]
            ],
            "dropped": [
                {"doc_id": i["id"], "position": i["rank"], "reason": i["why"]}
                for i in response["skipped"]
            ],
            "token_budget": PROMPT_WORD_BUDGET,
        },
        "citations": {"ids": response["cited"]},
    }


class AnswerHandler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        if self.path != "/answer":
            self._send(404, {"error": f"unknown path {self.path}"})
            return
        try:
            length = int(self.headers.get("Content-Length") or 0)
            case = json.loads(self.rfile.read(length) or b"null")
            question = case["question"]
        except (ValueError, TypeError, KeyError):
            self._send(400, {"error": 'expected a JSON body like {"question": "..."}'})
            return
        response = support_api(str(question))
        self._send(
            200,
            {
                "result": {"answer": response["answer"], "citations": response["cited"]},
                "evidence": evidence(question, response),
            },
        )

    def _send(self, status: int, body: dict) -> None:
        data = json.dumps(body).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:
        pass  # keep the terminal quiet while Oloproof runs


def make_server(port: int) -> ThreadingHTTPServer:
    """A server on 127.0.0.1:port (0 picks a free port); call serve_forever() on it."""
    return ThreadingHTTPServer(("127.0.0.1", port), AnswerHandler)


if __name__ == "__main__":
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 8766
    server = make_server(port)
    print(f"Serving POST http://127.0.0.1:{server.server_port}/answer (Ctrl-C to stop)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
