"""Clients of the model providers a judge may call.

    Provider                     the protocol: ``async complete(system, user) -> Completion``
    ├── OpenAIChatProvider       chat completions (OpenAI and compatible servers)
    └── AnthropicMessagesProvider  messages (Anthropic)
    ProviderError                a call that failed after its last try (never holds the key)

``make_provider(settings)`` builds the client a judge's settings name.
"""

from __future__ import annotations

from oloproof.judge_config import ProviderSettings
from oloproof.providers._http import (
    Completion,
    HttpProvider,
    Provider,
    ProviderError,
    Usage,
    retry_after_seconds,
)
from oloproof.providers.anthropic_messages import AnthropicMessagesProvider
from oloproof.providers.openai_chat import OpenAIChatProvider

__all__ = [
    "AnthropicMessagesProvider",
    "Completion",
    "HttpProvider",
    "OpenAIChatProvider",
    "Provider",
    "ProviderError",
    "Usage",
    "make_provider",
    "retry_after_seconds",
]

_CLASSES: dict[str, type[HttpProvider]] = {
    "openai": OpenAIChatProvider,
    "anthropic": AnthropicMessagesProvider,
}


def make_provider(settings: ProviderSettings) -> HttpProvider:
    """The client for ``settings.provider``, with its model, endpoint, limits and retries."""
    return _CLASSES[settings.provider](
        model=settings.model,
        base_url=settings.resolved_base_url,
        api_key_env=settings.api_key_env,
        temperature=settings.temperature,
        max_tokens=settings.max_tokens,
        timeout_s=settings.timeout_s,
        max_retries=settings.max_retries,
        concurrency=settings.concurrency,
        backoff_s=settings.retry_backoff_s,
    )
