"""A refusal because the system changed since a run says what changed.

`diagnose` (which re-executes a run's failed cases as the run executed them) and `run --resume`
refused a run whose system had changed with `(its code or settings differ)`, leaving the user
to find which. They name the parts now, a staged system's code by stage (`code (generate)`); never their
values, which may hold what the environment gave a setting (a resume names changed settings
apart, as it did). The support_rag example, through the real CLI; the resume's sentence is
checked in test_run_status.
"""

from __future__ import annotations

from pathlib import Path

from tests.support import copy_example, oloproof

# The example's generate, made to answer in capitals: another stage's code, nothing else.
GENERATE = 'return {"answer": first_sentence(best.text or ""), "citations": [best.doc_id]}'
CHANGED = 'return {"answer": first_sentence(best.text or "").upper(), "citations": [best.doc_id]}'


def test_diagnose_names_the_stage_whose_code_changed(tmp_path: Path) -> None:
    root = copy_example("support_rag", tmp_path)
    ran = oloproof("run", cwd=root)
    assert ran.code == 3, ran.out + ran.err
    run_id = ran.lines[0].split()[1]
    app = root / "app.py"
    app.write_text(app.read_text().replace(GENERATE, CHANGED))
    refused = oloproof(
        "diagnose",
        run_id,
        "--criterion",
        "answer_correct",
        "--intervention",
        "gold-context",
        cwd=root,
    )
    assert (refused.code, refused.out) == (2, ""), refused.out + refused.err
    # Was: (its code or settings differ), so its cases cannot be re-executed as they were
    assert refused.err == (
        f"error: the system changed since {run_id} ran (what differs: code (generate)), "
        "so its cases cannot be re-executed as they were; diagnose a run of the system as it "
        "is now (oloproof run)\n"
    )
