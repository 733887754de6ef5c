"""What every command refuses of its command line before it runs, and the checks of the paths
and numbers it is given.

Requirements:

1. An option that takes one value may be given once: given twice, which one counts (click
   keeps the last) is a guess, so the command line is refused. Options that may be repeated
   (``--filter``, ``--criterion``, ``--keep``) and flags (``--json --json`` means nothing
   else) are not refused.
2. An empty path (``--output "$OUT"`` with ``OUT`` unset) names no file or folder: refused,
   where it would otherwise be read as the current folder. So is ``-``, which many programs
   read as standard input or output and no Oloproof command does: it would be a file named
   ``-`` (``./-`` names one).
3. A path that cannot be looked up (a loop of symbolic links, a name too long for the file
   system) is refused with why (``lookup_fault``), before a command reads or writes it.
4. A file to read is a regular file: a named pipe with no writer would be waited on for ever
   and ``/dev/zero`` never ends (``check_input_file``).
5. A number a run records lies in what the ledger holds (``check_recordable``); ``--repeats``
   at most ``MAX_REPEATS`` (each repeat of a case is kept in the case's result). So does the
   path of a file to read, which runs and calibrations record: one whose name holds bytes
   that are not UTF-8 (read as lone surrogates) is refused naming it with its escapes
   (``check_input_file``), where the ledger would have refused the event naming nothing.

1 and 2 are checked as the command line is parsed (``checked_command``), so they apply to
every command alike and nothing runs first; their errors are click's usage errors (exit 2).
Typer carries a click of its own (``typer._click``), so its objects are known here by what
they say of themselves (``param_type_name``, a type's ``name``), not by click's classes.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import typer

from oloproof.callargs import INT_MAX, MAX_REPEATS
from oloproof.errors import ConfigError
from oloproof.filekinds import lookup_fault
from oloproof.usercode import unrecordable_path
from oloproof.yamlfile import refuse_unreadable


def checked_command(command: Any) -> Any:
    """``command`` (a click command typer built, and every subcommand under it) refusing, as
    it parses its arguments, what requirements 1 and 2 say."""
    original = command.parse_args

    def parse_args(ctx: typer.Context, args: list[str]) -> list[str]:
        try:
            if args and not ctx.resilient_parsing:
                _refuse_ambiguous(command, ctx, list(args))
            result: list[str] = original(ctx, args)
        except Exception as exc:
            _refused_reports(exc)
            raise
        return result

    command.parse_args = parse_args  # one instance, wrapped
    for sub in getattr(command, "commands", {}).values():
        checked_command(sub)
    return command


def _refused_reports(exc: Exception) -> None:
    """A usage error (not ``--help``'s exit 0) refuses the command line before the command
    runs: the reports it names say so (``oloproof.cli.ci.refused_command_line``)."""
    message = getattr(exc, "format_message", None)
    if getattr(exc, "exit_code", 0) != 0 and callable(message):
        from oloproof.cli.ci import refused_command_line

        refused_command_line(sys.argv[1:], str(message()))


def _refuse_ambiguous(command: Any, ctx: typer.Context, args: list[str]) -> None:
    # Parsed once more without converting anything: what was given, in order, as given.
    opts, _, order = command.make_parser(ctx).parse_args(args=args)
    seen: set[str] = set()
    for param in order:
        if param.param_type_name != "option" or param.multiple or param.count or param.is_flag:
            continue
        if param.name in seen:
            ctx.fail(
                f"{max(param.opts, key=len)} is given twice; it takes one value, so give it once"
            )
        seen.add(param.name)
    for param in command.get_params(ctx):
        if getattr(param.type, "name", None) != "path" or param.name is None:
            continue
        given = opts.get(param.name)
        values = given if isinstance(given, (list, tuple)) else [given]
        if any(value == "" for value in values):
            raise typer.BadParameter("an empty path names no file or folder", ctx, param)
        if any(value == "-" for value in values):
            raise typer.BadParameter(
                "'-' is no standard input or output here: give a path (./- names a file '-')",
                ctx,
                param,
            )


def check_input_file(path: Path, *, recorded: bool = False) -> None:
    """Refuse a file to read that cannot be looked up or is no regular file (requirements 3
    and 4), or, when the command records its path (``recorded``), whose name is no text
    (requirement 5); a missing file or a folder is left to the reader, which says so."""
    refuse_unreadable(path)
    unrecordable = unrecordable_path(str(path)) if recorded else None
    if unrecordable is not None:
        raise ConfigError(unrecordable)


def check_output_path(path: Path, verb: str = "write") -> None:
    """Refuse a path to write that cannot be looked up (requirement 3)."""
    fault = lookup_fault(path)
    if fault is not None:
        raise ConfigError(f"{path}: cannot {verb} it ({fault})")


def check_recordable(option: str, value: int | None) -> None:
    """Refuse a number larger than a run records (requirement 5)."""
    if value is not None and value > INT_MAX:
        raise ConfigError(f"{option} {value} is larger than a run records (at most {INT_MAX})")


def check_repeats(value: int) -> None:
    """Refuse more repeats than ``MAX_REPEATS`` (requirement 5)."""
    if value > MAX_REPEATS:
        raise ConfigError(
            f"--repeats {value}: at most {MAX_REPEATS} (each repeat of a case is kept in the "
            "case's result)"
        )


def a_number(param: typer.CallbackParam, value: Any) -> Any:
    """A callback for a float option with a range: ``nan`` passes click's range check (every
    comparison with it is false), so it is refused here, as click words a value out of range."""
    if isinstance(value, float) and value != value:
        kind = param.type
        raise typer.BadParameter(f"nan is not in the range {kind.min}<=x<={kind.max}.")  # type: ignore[attr-defined]  # a FloatRange
    return value
