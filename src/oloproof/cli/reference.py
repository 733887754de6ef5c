"""Generate ``docs/cli-reference.md`` from the commands' own ``--help``.

Run ``python -m oloproof.cli.reference > docs/cli-reference.md`` after changing a command's
docstring or options; ``tests/test_docs.py`` regenerates the page and fails when the committed
copy differs.

The help is rendered exactly as ``oloproof COMMAND --help`` renders it, but at a fixed width,
with no colour and no terminal codes, whatever the terminal or the environment says
(``COLUMNS``, ``FORCE_COLOR``, ``GITHUB_ACTIONS``), so the page is the same on every machine.
"""

from __future__ import annotations

import contextlib
import io
import sys
from collections.abc import Iterator

import typer
from typer import rich_utils
from typer.core import TyperCommand, TyperGroup

# Typer vendors click; these are the two public command classes a typer app is made of.
Command = TyperCommand | TyperGroup

WIDTH = 100
"""Columns of the rendered help; wide enough that no option help is cut short."""

HEADER = """\
# CLI reference

Every `oloproof` command with its `--help`, as the command prints it. This page is generated:
do not edit it by hand. After changing a command, regenerate it with

```
python -m oloproof.cli.reference > docs/cli-reference.md
```

`tests/test_docs.py` fails while the page is out of date. Exit codes are the same for every
command: 0 nothing blocks, 1 a rule FAILed (or `verify` found problems), 3 the gate blocks
without a FAIL, 2 the input was wrong.
"""


def command_tree() -> TyperGroup:
    """The ``oloproof`` command group with every command module registered."""
    from oloproof.cli.main import _register, app

    _register()
    root = typer.main.get_command(app)
    if not isinstance(root, TyperGroup):
        raise TypeError(f"the oloproof app is a {type(root).__name__}, not a command group")
    return root


def subcommands(group: TyperGroup, context: typer.Context) -> Iterator[tuple[str, Command]]:
    """The visible commands of ``group``, sorted by name."""
    for name in sorted(group.list_commands(context)):
        command = group.get_command(context, name)
        if isinstance(command, TyperCommand | TyperGroup) and not command.hidden:
            yield name, command


def walk(
    command: Command, path: tuple[str, ...] = ("oloproof",)
) -> Iterator[tuple[tuple[str, ...], Command]]:
    """Every command under ``command`` (itself first), depth first, subcommands by name."""
    yield path, command
    if isinstance(command, TyperGroup):
        context = typer.Context(command, info_name=path[-1])
        for name, sub in subcommands(command, context):
            yield from walk(sub, (*path, name))


@contextlib.contextmanager
def _plain_rich(width: int) -> Iterator[None]:
    """Make typer's rich help fixed-width and colourless for the duration of the block."""
    saved = (rich_utils.MAX_WIDTH, rich_utils.COLOR_SYSTEM, rich_utils.FORCE_TERMINAL)
    rich_utils.MAX_WIDTH, rich_utils.COLOR_SYSTEM, rich_utils.FORCE_TERMINAL = width, None, False
    try:
        yield
    finally:
        rich_utils.MAX_WIDTH, rich_utils.COLOR_SYSTEM, rich_utils.FORCE_TERMINAL = saved


def help_text(root: TyperGroup, path: tuple[str, ...], width: int = WIDTH) -> str:
    """What ``oloproof … --help`` prints for the command at ``path``, as plain text."""
    command: Command = root
    context = typer.Context(root, info_name=path[0], terminal_width=width, max_content_width=width)
    for name in path[1:]:
        found = dict(subcommands(command, context)) if isinstance(command, TyperGroup) else {}
        if name not in found:
            raise LookupError(f"no command {' '.join(path)}")
        command = found[name]
        context = typer.Context(
            command, info_name=name, parent=context, terminal_width=width, max_content_width=width
        )
    buffer = io.StringIO()
    with _plain_rich(width), contextlib.redirect_stdout(buffer):
        # Typer's rich help prints itself and returns ""; plain click help is returned.
        returned = command.get_help(context)
    text = buffer.getvalue() + returned
    # Rich pads lines to the width and frames the help with blank lines; neither is content.
    return "\n".join(line.rstrip() for line in text.splitlines()).strip("\n")


def render(width: int = WIDTH) -> str:
    """The whole reference page as Markdown."""
    root = command_tree()
    sections = [HEADER]
    for path, _command in walk(root):
        sections.append(f"## `{' '.join(path)}`\n\n```text\n{help_text(root, path, width)}\n```\n")
    return "\n".join(sections)


def main() -> None:
    sys.stdout.buffer.write(render().encode("utf-8"))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
