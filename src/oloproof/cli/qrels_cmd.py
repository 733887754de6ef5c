"""``oloproof qrels-to-cases``: relevance labels from a TREC qrels file into cases.jsonl."""

from __future__ import annotations

from pathlib import Path

import typer

from oloproof.cli.main import app


@app.command("qrels-to-cases")
def qrels_to_cases(
    qrels: Path = typer.Argument(..., help="A TREC qrels file: qid iter docno rel, a line."),
    cases: Path = typer.Option(
        Path("cases.jsonl"), "--cases", help="The cases to label; a case's id is its qid."
    ),
    output: Path | None = typer.Option(
        None, "--output", help="Where to write the labelled cases (default: over --cases)."
    ),
    replace: bool = typer.Option(
        False, "--replace", help="Overwrite an expected.relevant a case already has."
    ),
) -> None:
    """Set each case's expected.relevant from a qrels file: every document judged above 0,
    with its relevance as the grade. Cases without qrels are left as they are.

    Example: oloproof qrels-to-cases qrels.txt --cases cases.jsonl --output cases.labelled.jsonl
    """
    from oloproof.tabular import label_cases, read_qrels

    target = output or cases
    labelled, unlabelled, unknown = label_cases(cases, read_qrels(qrels), target, replace=replace)
    typer.echo(f"Labelled {labelled} cases in {target}; {unlabelled} have no qrels")
    if unknown:
        shown = ", ".join(unknown[:5]) + (
            f" and {len(unknown) - 5} more" if len(unknown) > 5 else ""
        )
        typer.echo(f"{len(unknown)} qids in {qrels} match no case: {shown}")
