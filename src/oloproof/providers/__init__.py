"""Clients of the model providers a judge may call.

    Provider                     the protocol: ``async complete(system, user, *, schema=None)``
    ├── OpenAIChatProvider       chat completions (OpenAI and compatible servers)
    └── AnthropicMessagesProvider  messages (Anthropic)
    ProviderError                a call that failed after its last try (never holds the key)

``read_body`` reads a reply's body within a size limit, decoding only the codings
``ACCEPT_ENCODING`` asks for; an ``http`` system reads its replies through it too.

``make_provider(settings)`` builds the client a judge's settings name.
"""

from __future__ import annotations

from oloproof.judge_config import MAX_BACKOFF_S, ProviderSettings
from oloproof.providers._body import (
    ACCEPT_ENCODING,
    MAX_BODY_BYTES,
    BodyTooLarge,
    UnreadableBody,
    read_body,
    unreadable_codings,
)
from oloproof.providers._http import (
    Completion,
    HttpProvider,
    Provider,
    ProviderError,
    Usage,
    backoff_wait,
    lone_surrogate_in,
    retry_after_seconds,
)
from oloproof.providers.anthropic_messages import AnthropicMessagesProvider
from oloproof.providers.openai_chat import OpenAIChatProvider

__all__ = [
    "ACCEPT_ENCODING",
    "MAX_BACKOFF_S",
    "MAX_BODY_BYTES",
    "AnthropicMessagesProvider",
    "BodyTooLarge",
    "Completion",
    "HttpProvider",
    "OpenAIChatProvider",
    "Provider",
    "ProviderError",
    "UnreadableBody",
    "Usage",
    "backoff_wait",
    "lone_surrogate_in",
    "make_provider",
    "read_body",
    "retry_after_seconds",
    "unreadable_codings",
]

_CLASSES: dict[str, type[HttpProvider]] = {
    "openai": OpenAIChatProvider,
    "anthropic": AnthropicMessagesProvider,
}


def make_provider(settings: ProviderSettings) -> HttpProvider:
    """The client for ``settings.provider``, with its model, endpoint, request shape and limits."""
    return _CLASSES[settings.provider](
        model=settings.model,
        base_url=settings.resolved_base_url,
        api_key_env=settings.api_key_env,
        temperature=settings.temperature,
        max_tokens=settings.max_tokens,
        max_tokens_field=settings.max_tokens_field or "max_completion_tokens",
        instructions=settings.resolved_instructions,
        structured_output=(
            "json_schema" if settings.structured_output == "auto" else settings.structured_output
        ),
        extra_body=settings.extra_body,
        server=settings.server,
        **settings.call_settings(),
    )
