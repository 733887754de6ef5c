"""`oloproof init`: start a project from an example shipped with Oloproof."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Annotated

import typer

from oloproof.cli.main import app
from oloproof.examples_dir import copy_example


@app.command("init")
def init(
    example: Annotated[
        str,
        typer.Option(
            "--example",
            metavar="NAME",
            help="The example to copy, e.g. blackbox_rag or support_rag.",
        ),
    ],
    directory: Annotated[
        Path,
        typer.Argument(
            metavar="DIR",
            help="The folder to create; it must not exist or be empty.",
            show_default=False,
        ),
    ],
) -> None:
    """Create a project folder from an example shipped with Oloproof.

    The folder holds the example's system, cases and oloproof.yaml; run it from there.

    Example: oloproof init --example blackbox_rag my-eval
    """
    created = copy_example(example, directory)
    files = sorted(
        path.relative_to(created).as_posix() for path in created.rglob("*") if path.is_file()
    )
    typer.echo(f"Created {directory} from the {example} example ({len(files)} files):")
    for name in files:
        typer.echo(f"  {(directory / name).as_posix()}")
    typer.echo("")
    typer.echo("Next:")
    typer.echo(f"  cd {shlex.quote(str(directory))}")
    typer.echo("  oloproof run")
