"""The OpenAI chat-completions protocol: OpenAI itself, or any compatible server.

``POST {base_url}/chat/completions`` with ``Authorization: Bearer <key>``; ``base_url`` ends
in ``/v1`` (``https://api.openai.com/v1``, ``http://localhost:8000/v1`` for vLLM,
``http://localhost:11434/v1`` for Ollama). The reply's ``id``, ``model`` and
``system_fingerprint`` are kept when the server gives them.
"""

from __future__ import annotations

from typing import Any, ClassVar

from oloproof.providers._http import (
    Completion,
    HttpProvider,
    Usage,
    optional_int,
    optional_str,
)


class OpenAIChatProvider(HttpProvider):
    """A client of the chat-completions protocol."""

    name: ClassVar[str] = "openai"
    protocol: ClassVar[str] = "chat-completions"

    @property
    def url(self) -> str:
        return f"{self.base_url}/chat/completions"

    def auth_headers(self, key: str) -> dict[str, str]:
        return {"authorization": f"Bearer {key}"}

    def payload(self, system: str, user: str) -> dict[str, Any]:
        return {
            "model": self.model,
            "messages": [
                {"role": "system", "content": system},
                {"role": "user", "content": user},
            ],
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
        }

    def parse(self, data: Any) -> Completion:
        choice = data["choices"][0]
        text = choice["message"]["content"]
        if not isinstance(text, str):
            raise TypeError("the reply has no text content")
        usage = data.get("usage") or {}
        return Completion(
            text=text,
            usage=Usage(
                input_tokens=optional_int(usage.get("prompt_tokens")),
                output_tokens=optional_int(usage.get("completion_tokens")),
            ),
            reply_id=optional_str(data.get("id")),
            fingerprint=optional_str(data.get("system_fingerprint")),
            model=optional_str(data.get("model")),
            finish_reason=optional_str(choice.get("finish_reason")),
        )
