"""The OpenAI chat-completions protocol: OpenAI itself, or any compatible server.

``POST {base_url}/chat/completions`` with ``Authorization: Bearer <key>``; ``base_url`` ends
in ``/v1`` (``https://api.openai.com/v1``, ``http://localhost:8000/v1`` for vLLM,
``http://localhost:11434/v1`` for Ollama). The reply's ``id``, ``model`` and
``system_fingerprint`` are kept when the server gives them.

The body is the one the official SDK sends for the same call: ``model``, ``messages`` (a system
message, unless the instructions go in the user turn), the token limit under
``max_completion_tokens`` (or ``max_tokens`` for servers that read only that), ``temperature``
only when one is set, and ``response_format`` when a reply schema is asked for:
``{"type": "json_schema", "json_schema": {"name": ..., "strict": true, "schema": ...}}``, or
``{"type": "json_object"}`` (with ``server: llama.cpp``, whose servers take no json_schema type,
``{"type": "json_object", "schema": ...}``). ``extra_body`` goes over it last, as the SDK's
``extra_body`` does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from oloproof.providers._http import (
    Completion,
    HttpProvider,
    MalformedReply,
    Usage,
    error_said,
    optional_text,
    quoted,
    said_to_be,
    token_count,
    unfinished,
    usage_object,
)

REPLY_SCHEMA_NAME = "reply"
"""The name a ``json_schema`` response format gives the reply's schema."""


class OpenAIChatProvider(HttpProvider):
    """A client of the chat-completions protocol."""

    name: ClassVar[str] = "openai"
    protocol: ClassVar[str] = "chat-completions"

    @property
    def url(self) -> str:
        return f"{self.base_url}/chat/completions"

    def auth_headers(self, key: str) -> dict[str, str]:
        return {"authorization": f"Bearer {key}"}

    def payload(
        self, system: str, user: str, schema: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        system_text, user_text = self.messages(system, user)
        messages = [{"role": "system", "content": system_text}] if system_text is not None else []
        messages.append({"role": "user", "content": user_text})
        body: dict[str, Any] = {"messages": messages, "model": self.model}
        body[self.max_tokens_field] = self.max_tokens
        if schema is not None and self.structured_output == "json_schema":
            body["response_format"] = self._schema_format(schema)
        elif schema is not None and self.structured_output == "json_object":
            body["response_format"] = {"type": "json_object"}
        if self.temperature is not None:
            body["temperature"] = self.temperature
        return {**body, **self.extra_body}

    def _schema_format(self, schema: Mapping[str, Any]) -> dict[str, Any]:
        if self.server == "llama.cpp":
            # llama.cpp's server and llama-cpp-python's both take the schema this way (the
            # latter refuses the json_schema type).
            return {"type": "json_object", "schema": dict(schema)}
        return {
            "type": "json_schema",
            "json_schema": {"name": REPLY_SCHEMA_NAME, "strict": True, "schema": dict(schema)},
        }

    def parse(self, data: dict[str, Any]) -> Completion:
        choices = data["choices"]
        if not isinstance(choices, list):
            raise MalformedReply("choices is not a list of at least one choice")
        if not choices:
            # A server that withheld every choice (a blocked prompt, say) may still report the
            # tokens it billed: counted, as a reply without text is.
            raise self.unanswered("choices is not a list of at least one choice", data)
        choice = choices[0]
        if not isinstance(choice, dict):
            raise MalformedReply("choices[0] is not an object")
        if choice.get("error") is not None:
            # A server that failed part way through the reply (OpenRouter says so here).
            raise self.unanswered("choices[0] holds the server's error" + error_said(choice), data)
        message = choice["message"]
        if not isinstance(message, dict):
            raise MalformedReply("choices[0].message is not an object")
        said_to_be(message, "role", "assistant", "choices[0].message.")
        # Read as text or not given: a refusal in another shape (a list, an object) skipped
        # as absent would let the text beside it stand as the answer.
        refusal = optional_text(message, "refusal", "choices[0].message.")
        text = message["content"]
        finish_reason = optional_text(choice, "finish_reason", "choices[0].")
        if not isinstance(text, str):
            if refusal is not None:
                why = _refused(refusal)
            elif message.get("tool_calls"):
                why = _TOOL_CALL
            else:
                why = _said(finish_reason) or (
                    "" if finish_reason else unfinished("finish_reason", choice)
                )
            said = "the reply has no text content" + (f": {why}" if why else "")
            raise self.unanswered(said, data, finish_reason)
        return Completion(
            text=text,
            usage=self.usage(data),
            reply_id=optional_text(data, "id"),
            fingerprint=optional_text(data, "system_fingerprint"),
            model=optional_text(data, "model"),
            finish_reason=finish_reason,
            incomplete=_incomplete(len(choices), message, refusal, finish_reason)
            or (None if finish_reason else unfinished("finish_reason", choice)),
        )

    def usage(self, data: Mapping[str, Any]) -> Usage:
        usage = usage_object(data)
        return Usage(
            input_tokens=token_count(usage, "prompt_tokens"),
            output_tokens=token_count(usage, "completion_tokens"),
        )


_TOOL_CALL = "the model asked to call a tool instead of answering"

# The finish reasons that say the text is not the model's whole answer, each with what it
# says ({} is the reason as the server wrote it). Any other (``stop``, or a server's own word
# for it, such as TGI's ``eos_token``) is taken as a finished reply; none at all is not
# (``unfinished``). They are read in any case, and in other APIs' words too: gateways serving
# Gemini models here pass Gemini's own reasons through (STOP, MAX_TOKENS, SAFETY), and proxies
# in front of Anthropic's API its max_tokens.
_CUT = "the reply was cut at the token limit (finish_reason {}; max_tokens sets it)"
_FILTERED = "the server's content filter cut or withheld the reply (finish_reason {})"
_INCOMPLETE = {
    "length": _CUT,
    "max_tokens": _CUT,
    # Mistral's: the reply ran into the model's context length (Anthropic's
    # model_context_window_exceeded).
    "model_length": "the reply was cut where the model's context ends (finish_reason {})",
    "content_filter": _FILTERED,
    **dict.fromkeys(("safety", "recitation", "blocklist", "prohibited_content", "spii"), _FILTERED),
    "tool_calls": f"{_TOOL_CALL} (finish_reason {{}})",
    "function_call": f"{_TOOL_CALL} (finish_reason {{}})",
    "malformed_function_call": f"{_TOOL_CALL} (finish_reason {{}})",
    "error": "the server stopped the reply on an error (finish_reason {})",
    # vLLM's, for a request its engine aborted (a shutdown, a pause, an abort request): the
    # text is what was made by then, sent with HTTP 200.
    "abort": "the server aborted the reply before the model finished it (finish_reason {})",
    "insufficient_system_resource": (
        "the server interrupted the reply for want of resources (finish_reason {})"
    ),
}


def _said(finish_reason: str | None) -> str | None:
    """What ``finish_reason`` says of a reply that is not the model's whole answer, or None."""
    if finish_reason is None:
        return None
    said = _INCOMPLETE.get(finish_reason.casefold())
    return None if said is None else said.format(finish_reason)


def _incomplete(
    choices: int, message: dict[str, Any], refusal: str | None, finish_reason: str | None
) -> str | None:
    """Why a reply with text does not hold the model's one whole answer, or None."""
    if refusal is not None:
        return _refused(refusal)
    if choices > 1:
        return (
            f"the reply holds {choices} choices (is n set in extra_body?), and Oloproof "
            "records one answer"
        )
    said = _said(finish_reason)
    if said is None and (message.get("tool_calls") or message.get("function_call")):
        # Some servers finish a tool call with "stop": the call itself says the text is not
        # the answer, only what the model wrote before asking for it.
        key = "tool_calls" if message.get("tool_calls") else "function_call"
        return f"{_TOOL_CALL} (choices[0].message.{key})"
    return said


def _refused(refusal: str) -> str:
    return f"the model refused: {quoted(refusal)}"
