"""The Anthropic messages protocol.

``POST {base_url}/v1/messages`` with ``authorization: Bearer <key>`` and ``anthropic-version:
2026-10-21``, as the current official SDK sends them; ``base_url`` is the host
(``https://api.anthropic.com``). The body: ``max_tokens``, ``messages``, ``model``, ``system``
(unless the instructions go in the user turn) and, when a reply schema is asked for,
``output_config: {"format": {"type": "json_schema", "schema": ...}}``. The current API has no
``temperature``; ``extra_body`` can still send one to a model that takes it. The reply's ``id``
and ``model`` are kept; the protocol has no system fingerprint. Its ``input_tokens`` leaves out
prompt tokens read from or written to the prompt cache; ``Usage.input_tokens`` adds them back.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from oloproof.providers._http import (
    Completion,
    HttpProvider,
    Usage,
    optional_int,
    optional_str,
)

ANTHROPIC_VERSION = "2026-10-21"
"""The API version the current official SDK sends."""


class AnthropicMessagesProvider(HttpProvider):
    """A client of the messages protocol."""

    name: ClassVar[str] = "anthropic"
    protocol: ClassVar[str] = "messages"

    @property
    def url(self) -> str:
        return f"{self.base_url}/v1/messages"

    def auth_headers(self, key: str) -> dict[str, str]:
        return {"authorization": f"Bearer {key}"}

    def extra_headers(self) -> dict[str, str]:
        return {"anthropic-version": ANTHROPIC_VERSION}

    def payload(
        self, system: str, user: str, schema: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        system_text, user_text = self.messages(system, user)
        body: dict[str, Any] = {
            "max_tokens": self.max_tokens,
            "messages": [{"role": "user", "content": user_text}],
            "model": self.model,
        }
        if schema is not None and self.structured_output == "json_schema":
            body["output_config"] = {"format": {"type": "json_schema", "schema": dict(schema)}}
        if system_text is not None:
            body["system"] = system_text
        return {**body, **self.extra_body}

    def parse(self, data: Any) -> Completion:
        texts = [block["text"] for block in data["content"] if block.get("type") == "text"]
        if not texts or not all(isinstance(text, str) for text in texts):
            raise ValueError("the reply has no text content")
        usage = data.get("usage") or {}
        return Completion(
            text="".join(texts),
            usage=Usage(
                input_tokens=_prompt_tokens(usage),
                output_tokens=optional_int(usage.get("output_tokens")),
            ),
            reply_id=optional_str(data.get("id")),
            model=optional_str(data.get("model")),
            finish_reason=optional_str(data.get("stop_reason")),
        )


def _prompt_tokens(usage: Mapping[str, Any]) -> int | None:
    """Every prompt token: the uncached ones and those read from or written to the cache."""
    uncached = optional_int(usage.get("input_tokens"))
    if uncached is None:
        return None
    cached = (usage.get("cache_read_input_tokens"), usage.get("cache_creation_input_tokens"))
    return uncached + sum(optional_int(count) or 0 for count in cached)
