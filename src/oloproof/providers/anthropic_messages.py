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
    MalformedReply,
    Usage,
    optional_text,
    said_to_be,
    token_count,
    unfinished,
    usage_object,
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

    def parse(self, data: dict[str, Any]) -> Completion:
        said_to_be(data, "type", "message")
        said_to_be(data, "role", "assistant")
        blocks = data["content"]
        if not isinstance(blocks, list):
            raise MalformedReply("content is not a list")
        texts = []
        tool_use = False
        for number, block in enumerate(blocks):
            if not isinstance(block, dict):
                raise MalformedReply(f"content[{number}] is not an object")
            if block.get("type") == "text":
                texts.append(block["text"])
            tool_use = tool_use or block.get("type") == "tool_use"
        stop_reason = optional_text(data, "stop_reason")
        if not texts or not all(isinstance(text, str) for text in texts):
            why = _INCOMPLETE.get(stop_reason or "") or (
                None if stop_reason else unfinished("stop_reason", data)
            )
            said = "the reply has no text content" + (f": {why}" if why else "")
            raise self.unanswered(said, data, stop_reason)
        return Completion(
            text="".join(texts),
            usage=self.usage(data),
            reply_id=optional_text(data, "id"),
            model=optional_text(data, "model"),
            finish_reason=stop_reason,
            incomplete=_INCOMPLETE.get(stop_reason or "")
            or (_TOOL_USE_BLOCK if tool_use else None)
            or (None if stop_reason else unfinished("stop_reason", data)),
        )

    def usage(self, data: Mapping[str, Any]) -> Usage:
        usage = usage_object(data)
        return Usage(
            input_tokens=_prompt_tokens(usage),
            output_tokens=token_count(usage, "output_tokens"),
        )


# The stop reasons that say the text is not the model's whole answer; the others (end_turn,
# stop_sequence) end a finished reply.
_INCOMPLETE = {
    "max_tokens": (
        "the reply was cut at the token limit (stop_reason max_tokens; max_tokens sets it)"
    ),
    "model_context_window_exceeded": (
        "the reply was cut where the model's context window ends "
        "(stop_reason model_context_window_exceeded)"
    ),
    "refusal": "the model refused to answer (stop_reason refusal)",
    "tool_use": "the model asked to call a tool instead of answering (stop_reason tool_use)",
    "pause_turn": "the server paused the model's turn before it ended (stop_reason pause_turn)",
}


# A call to one of the caller's tools (not a server tool, whose result the reply goes on to
# use) says the text is not the answer, whatever stop reason a server gives with it.
_TOOL_USE_BLOCK = "the model asked to call a tool instead of answering (a tool_use block)"


def _prompt_tokens(usage: Mapping[str, Any]) -> int | None:
    """Every prompt token: the uncached ones and those read from or written to the cache."""
    uncached = token_count(usage, "input_tokens")
    read = token_count(usage, "cache_read_input_tokens")
    written = token_count(usage, "cache_creation_input_tokens")
    if uncached is None:
        return None
    return uncached + (read or 0) + (written or 0)
