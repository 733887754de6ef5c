"""``oloproof docs``: where the guides are, installed or in a source checkout."""

from __future__ import annotations

import importlib.resources
from pathlib import Path

import typer

from oloproof.cli.main import app
from oloproof.errors import ConfigError


def docs_root() -> Path:
    """The folder of the guides: ``oloproof/docs`` in a wheel, ``docs/`` in a checkout."""
    packaged = importlib.resources.files("oloproof") / "docs"
    if isinstance(packaged, Path) and (packaged / "index.md").is_file():
        return packaged
    checkout = Path(__file__).resolve().parents[3] / "docs"
    if (checkout / "index.md").is_file():
        return checkout
    raise ConfigError(f"no guides found (looked in {packaged} and {checkout}); reinstall oloproof")


@app.command("docs")
def docs_command(
    path_only: bool = typer.Option(False, "--path", help="Print only the folder of the guides."),
) -> None:
    """Say where the guides are (they are installed with Oloproof) and list them.

    Example: oloproof docs --path
    """
    root = docs_root()
    if path_only:
        typer.echo(str(root))
        return
    typer.echo(f"The guides are Markdown files in {root}; start with {root / 'index.md'}")
    for page in sorted(root.glob("*.md")):
        lines = page.read_text(encoding="utf-8").splitlines()
        title = lines[0].lstrip("# ").strip() if lines else page.stem
        typer.echo(f"  {page.name}: {title}")
