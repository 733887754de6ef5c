"""The rule for a setting that names an environment variable (a judge's ``api_key_env``, a
project's ``secrets:``): a name, never the value it holds. Kept apart from the settings' models
so that a read command can check a project's ``secrets:`` without loading them."""

from __future__ import annotations

import re

ENV_NAME_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]*$"
ENV_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
"""``${NAME}``, where a setting reads an environment variable (an http system's header values)."""
SHELL_REFERENCE = re.compile(r"\$(?:\{[A-Za-z_][A-Za-z0-9_]*\}|[A-Za-z_][A-Za-z0-9_]*)")
"""``${NAME}`` or ``$NAME``, as a shell reads a variable: what a setting that reads none (a URL)
must not hold, since it would be sent as written."""
UNREAD_REFERENCE = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)")
"""What still reads as a variable in a value once its ``${NAME}`` are taken out: ``$NAME``, or
``${NAME`` with its brace left open (a header value would send it as written)."""


def variable_name(name: str, holding: str = "the key") -> str:
    """``name``, when it is the name of an environment variable; else a ``ValueError`` whose
    message never repeats it (it may be the value ``holding``, pasted in by mistake)."""
    if not re.match(ENV_NAME_PATTERN, name):
        raise ValueError(
            f"must be the name of an environment variable that holds {holding} "
            f"(letters, digits and _), never {holding} itself"
        )
    return name
