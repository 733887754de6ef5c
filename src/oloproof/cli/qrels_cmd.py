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
    """Set each case's expected.relevant from a qrels file: every judged document, with its
    relevance as the grade (0 or below: judged not relevant). A qid is matched to the case id
    it reads as. Cases without qrels are left as they are; qrels none of whose qids is a case
    are refused.

    Example: oloproof qrels-to-cases qrels.txt --cases cases.jsonl --output cases.labelled.jsonl
    """
    from oloproof.cli.arguments import check_input_file, check_output_path
    from oloproof.display import first_few
    from oloproof.tabular import label_cases

    target = output or cases
    check_input_file(qrels)
    check_input_file(cases)
    check_output_path(target)
    done = label_cases(qrels, cases, target, replace=replace)
    typer.echo(f"Labelled {done.cases} cases in {target}; {done.unlabelled} have no qrels")
    if done.nothing_relevant:
        typer.echo(
            f"{done.nothing_relevant} of them judge no document relevant (none graded above 0): "
            "the retrieval metrics exclude such a case as all_labels_non_relevant"
        )
    if done.unknown:
        # A qid holding a character that does not show (a zero-width space) is shown escaped:
        # as it prints, it would look like the case id it failed to match.
        shown = first_few(done.unknown, 5, lambda q: q if q.isprintable() else repr(q))
        typer.echo(f"{len(done.unknown)} qids in {qrels} match no case: {shown}")
