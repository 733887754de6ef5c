"""Docs that cannot drift: the generated CLI reference, command help, runnable examples, links.

- ``docs/cli-reference.md`` is regenerated and compared byte for byte.
- Every command has help text; every command that does something shows an ``Example:`` of
  itself in its help, and every option and argument has help.
- Every ```` ```python ```` block in README.md and docs/*.md runs, in a fresh namespace inside
  an empty temp folder. The one way out is a first line ``# not runnable: REASON``; such a block
  is still compiled, and the reason is required.
- Every command is mentioned in README.md or a hand-written page (the generated reference does
  not count), and docs/index.md links every page.
"""

from __future__ import annotations

import difflib
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.support import REPO
from typer.core import TyperGroup

from oloproof.cli.reference import Command, command_tree, help_text, render, walk

DOCS = REPO / "docs"
REFERENCE = DOCS / "cli-reference.md"
REGENERATE = "python -m oloproof.cli.reference > docs/cli-reference.md"

COMMANDS = [(path, command) for path, command in walk(command_tree())]
LEAVES = [(path, command) for path, command in COMMANDS if not isinstance(command, TyperGroup)]

# Commands whose help has no `Example:` line yet, with the reason. Each is an xfail(strict=True)
# case, so the test turns red (XPASS) the day the example is added: remove the entry then.
MISSING_EXAMPLES: dict[tuple[str, ...], str] = {}


def _name(path: tuple[str, ...]) -> str:
    return " ".join(path)


# --- (a) the generated reference ----------------------------------------------------------------


def test_cli_reference_is_up_to_date() -> None:
    expected = render()
    actual = REFERENCE.read_text(encoding="utf-8")
    if actual != expected:
        diff = "".join(
            difflib.unified_diff(
                actual.splitlines(keepends=True),
                expected.splitlines(keepends=True),
                "docs/cli-reference.md",
                "regenerated",
            )
        )
        pytest.fail(f"docs/cli-reference.md is out of date; run `{REGENERATE}`\n{diff}")


def test_cli_reference_entry_point_ignores_the_terminal() -> None:
    # What the generator prints does not depend on the width, colour or CI the shell reports.
    env = {
        **os.environ,
        "COLUMNS": "40",
        "TERMINAL_WIDTH": "60",
        "FORCE_COLOR": "1",
        "PY_COLORS": "1",
        "GITHUB_ACTIONS": "true",
    }
    proc = subprocess.run(
        [sys.executable, "-m", "oloproof.cli.reference"],
        capture_output=True,
        env=env,
        cwd=REPO,
        timeout=60,
        check=True,
    )
    assert proc.stdout.decode("utf-8") == REFERENCE.read_text(encoding="utf-8")
    assert b"\x1b" not in proc.stdout


def test_cli_reference_covers_every_command_once() -> None:
    text = REFERENCE.read_text(encoding="utf-8")
    headings = re.findall(r"^## `(.+)`$", text, flags=re.MULTILINE)
    assert headings == [_name(path) for path, _ in COMMANDS]
    assert len(COMMANDS) >= 10  # the walk found the registered commands, not just the root


# --- (b) help text and examples -----------------------------------------------------------------


@pytest.mark.parametrize(("path", "command"), COMMANDS, ids=[_name(p) for p, _ in COMMANDS])
def test_every_command_has_help(path: tuple[str, ...], command: Command) -> None:
    assert (command.help or "").strip(), f"{_name(path)} has no help text"
    undocumented = [p.name for p in command.params if not (getattr(p, "help", None) or "").strip()]
    assert not undocumented, f"{_name(path)}: no help for {', '.join(map(str, undocumented))}"


def _example_params() -> list[Any]:
    params = []
    for path, command in LEAVES:
        marks = []
        if path in MISSING_EXAMPLES:
            marks.append(pytest.mark.xfail(strict=True, reason=MISSING_EXAMPLES[path]))
        params.append(pytest.param(path, command, marks=marks, id=_name(path)))
    return params


@pytest.mark.parametrize(("path", "command"), _example_params())
def test_every_command_shows_an_example_of_itself(path: tuple[str, ...], command: Command) -> None:
    examples = [
        line.strip().removeprefix("Example:").strip()
        for line in (command.help or "").splitlines()
        if line.strip().startswith("Example:")
    ]
    assert examples, f"`{_name(path)} --help` has no `Example:` line"
    for example in examples:
        assert example.startswith(_name(path) + " ") or example == _name(path), (
            f"`{_name(path)}` example does not run that command: {example!r}"
        )
    # And each example survives the help renderer whole, on a line of its own (it is what a
    # user reads and copies): the renderer joins the lines of one paragraph into one.
    rendered = [line.strip() for line in help_text(command_tree(), path).splitlines()]
    for example in examples:
        assert f"Example: {example}" in rendered, (
            f"`{_name(path)} --help` does not show {example!r} on a line of its own"
        )


def test_missing_examples_name_real_commands() -> None:
    leaves = {path for path, _ in LEAVES}
    assert set(MISSING_EXAMPLES) <= leaves, set(MISSING_EXAMPLES) - leaves


# --- (c) python blocks in the docs run ----------------------------------------------------------

_FENCE = re.compile(r"^(`{3,})[ \t]*([\w+-]*)")
_NOT_RUNNABLE = "# not runnable:"


def python_blocks() -> list[tuple[str, int, str]]:
    """(page, line of the opening fence, code) for every python block, in page order."""
    blocks = []
    for page in [REPO / "README.md", *sorted(DOCS.glob("*.md"))]:
        lines = page.read_text(encoding="utf-8").splitlines()
        index = 0
        while index < len(lines):
            match = _FENCE.match(lines[index])
            if match is None:
                index += 1
                continue
            start, fence, language = index, match.group(1), match.group(2).lower()
            index += 1
            body = []
            while index < len(lines) and lines[index].rstrip() != fence:
                body.append(lines[index])
                index += 1
            index += 1  # the closing fence
            if language in ("python", "py", "python3"):
                blocks.append((page.relative_to(REPO).as_posix(), start + 1, "\n".join(body)))
    return blocks


BLOCKS = python_blocks()


def test_the_block_finder_sees_every_python_fence() -> None:
    pages = [REPO / "README.md", *DOCS.glob("*.md")]
    fences = sum(
        len(re.findall(r"^`{3,}[ \t]*(?:python|py|python3)\b", p.read_text(), re.MULTILINE))
        for p in pages
    )
    assert len(BLOCKS) == fences
    assert len(BLOCKS) >= 5


@pytest.mark.parametrize(
    ("page", "line", "code"), BLOCKS, ids=[f"{page}:{line}" for page, line, _ in BLOCKS]
)
def test_python_block_runs(
    page: str, line: int, code: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    compiled = compile(code, f"{page}:{line}", "exec")
    first = code.lstrip().splitlines()[0] if code.strip() else ""
    if first.startswith(_NOT_RUNNABLE):
        reason = first.removeprefix(_NOT_RUNNABLE).strip()
        assert reason, f"{page}:{line}: say why the block is not runnable"
        return  # compiled above: it is at least valid Python
    monkeypatch.chdir(tmp_path)
    exec(compiled, {"__name__": "__docs__"})


# --- (d) every command is documented by hand, and the index links every page ------------------


def _hand_written() -> str:
    pages = [REPO / "README.md", *(p for p in DOCS.glob("*.md") if p != REFERENCE)]
    return "\n".join(p.read_text(encoding="utf-8") for p in pages)


@pytest.mark.parametrize(("path", "command"), COMMANDS[1:], ids=[_name(p) for p, _ in COMMANDS[1:]])
def test_every_command_is_mentioned_in_readme_or_docs(
    path: tuple[str, ...], command: Command
) -> None:
    pattern = r"\b" + r"\s+".join(map(re.escape, path)) + r"(?![\w-])"
    assert re.search(pattern, _hand_written()), (
        f"`{_name(path)}` appears in no hand-written page (README.md, docs/*.md other than "
        "the generated cli-reference.md)"
    )


def test_index_links_every_page_and_every_link_resolves() -> None:
    index = DOCS / "index.md"
    targets = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", index.read_text(encoding="utf-8"))
    for target in targets:
        assert (DOCS / target).resolve().exists(), f"docs/index.md links a missing {target}"
    linked = {(DOCS / t).resolve() for t in targets}
    pages = {p.resolve() for p in DOCS.glob("*.md") if p != index}
    assert pages <= linked, f"docs/index.md does not link {sorted(p.name for p in pages - linked)}"
