"""The Anthropic messages protocol.

``POST {base_url}/v1/messages`` with ``x-api-key: <key>`` and ``anthropic-version``;
``base_url`` is the host (``https://api.anthropic.com``). The reply's ``id`` and ``model`` are
kept; the protocol has no system fingerprint.
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

ANTHROPIC_VERSION = "2023-06-01"


class AnthropicMessagesProvider(HttpProvider):
    """A client of the messages protocol."""

    name: ClassVar[str] = "anthropic"
    protocol: ClassVar[str] = "messages"

    @property
    def url(self) -> str:
        return f"{self.base_url}/v1/messages"

    def auth_headers(self, key: str) -> dict[str, str]:
        return {"x-api-key": key}

    def extra_headers(self) -> dict[str, str]:
        return {"anthropic-version": ANTHROPIC_VERSION}

    def payload(self, system: str, user: str) -> dict[str, Any]:
        return {
            "model": self.model,
            "system": system,
            "messages": [{"role": "user", "content": user}],
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
        }

    def parse(self, data: Any) -> Completion:
        texts = [block["text"] for block in data["content"] if block.get("type") == "text"]
        if not texts or not all(isinstance(text, str) for text in texts):
            raise ValueError("the reply has no text content")
        usage = data.get("usage") or {}
        return Completion(
            text="".join(texts),
            usage=Usage(
                input_tokens=optional_int(usage.get("input_tokens")),
                output_tokens=optional_int(usage.get("output_tokens")),
            ),
            reply_id=optional_str(data.get("id")),
            model=optional_str(data.get("model")),
            finish_reason=optional_str(data.get("stop_reason")),
        )
