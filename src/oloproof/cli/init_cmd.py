"""`oloproof init`: start a project, blank or from an example shipped with Oloproof."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Annotated

import typer

from oloproof.cli.main import app
from oloproof.errors import ConfigError
from oloproof.examples_dir import copy_blank, copy_example, describe, list_examples


@app.command("init")
def init(
    directory: Annotated[
        Path | None,
        typer.Argument(
            metavar="DIR",
            help="The folder to create; it must not exist or be empty.",
            show_default=False,
        ),
    ] = None,
    example: Annotated[
        str | None,
        typer.Option(
            "--example",
            metavar="NAME",
            help="Copy this example instead of the blank project: blackbox_rag, support_rag "
            "or judge_gate (--list describes them).",
        ),
    ] = None,
    show_list: Annotated[
        bool, typer.Option("--list", help="List the examples with what each shows, and exit.")
    ] = False,
) -> None:
    """Create a project folder: a blank, runnable project, or a copy of an example.

    The blank project has a callable system (app.py), four cases, one check and a release
    policy; replace the system's body with a call to your application. Run it from its folder.

    Example: oloproof init --example blackbox_rag my-eval
    """
    if show_list:
        if example is not None or directory is not None:
            raise ConfigError(
                "--list lists the examples and copies nothing: give it without --example or DIR"
            )
        for name in list_examples():
            typer.echo(f"{name}: {describe(name)}")
        return
    if directory is None:
        raise ConfigError("name the folder to create: oloproof init DIR (--list names examples)")
    _check_creatable(directory)
    if example is None:
        created = copy_blank(directory)
        what = "a blank project"
    else:
        created = copy_example(example, directory)
        what = f"the {example} example"
    files = sorted(
        path.relative_to(created).as_posix() for path in created.rglob("*") if path.is_file()
    )
    typer.echo(f"Created {directory} from {what} ({len(files)} files):")
    for name in files:
        typer.echo(f"  {(directory / name).as_posix()}")
    typer.echo("")
    typer.echo("Next:")
    if created.resolve() != Path.cwd().resolve():
        typer.echo(f"  cd {shlex.quote(str(directory))}")
    typer.echo("  oloproof run")


def _check_creatable(directory: Path) -> None:
    """Refuse a folder that cannot be made where it is named: a path that cannot be looked up,
    or one under a file."""
    from oloproof.cli.arguments import check_output_path

    check_output_path(directory, "create")
    for above in directory.parents:
        if above.is_dir():
            return
        if above.exists():
            raise ConfigError(f"cannot create {directory}: {above} is a file, not a folder")
