"""The viewer's diagnosis page shows every count and label line `diagnose` printed, word for word.

Through the real CLI and `oloproof view` over HTTP: a diagnosis made with `--repeats 2` (its
Control line counts the cases that passed in at least one of the re-executions, its Recovered
line says in how many repeats each case recovered), the top-k replay of the same run (its
Confirmed line and the labels it carries from that diagnosis), and a diagnosis of a system that
is not staged. The page's list of counts is, line for line, what `diagnose` printed before its
Diagnosis line.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

from tests.cli.test_diagnose_interventions import run, write_project
from tests.support import oloproof
from tests.view.support import ADDRESS, fetch, serving

GOLD = ("--intervention", "gold-context", "--criterion", "answer_correct")
TOP_K = ("--intervention", "top-k", "--top-k", "2", "--criterion", "answer_correct")

BLACK_BOX_APP = """
from oloproof import system

@system(name="box", version="1")
def run(case):
    return {"answer": "no idea"}
"""
BLACK_BOX_CONFIG = """system: {name: box, version: '1', callable: 'app:run'}
dataset: cases.jsonl
evaluators:
  - {type: contains, criterion: answer_correct, field: answer, expected_field: answer}
"""


def diagnosed(root: Path, *args: str) -> tuple[str, list[str]]:
    """The diagnosis ``diagnose`` made, and the lines it printed before its Diagnosis line."""
    done = oloproof("diagnose", *args, cwd=root)
    assert done.code == 0, done.out + done.err
    end = next(n for n, line in enumerate(done.lines) if line.startswith("Diagnosis sha256:"))
    return ADDRESS.findall(done.lines[end])[0], done.lines[:end]


def shown(page: str) -> list[str]:
    """The page's count lines as a reader sees them (tags dropped, entities decoded)."""
    (counts,) = re.findall(r'<ul class="counts">(.*?)</ul>', page, re.S)
    return [
        html.unescape(re.sub(r"<[^>]+>", "", item))
        for item in re.findall(r"<li[^>]*>(.*?)</li>", counts, re.S)
    ]


def test_a_repeated_diagnosis_and_its_replay_show_the_lines_the_cli_printed(
    tmp_path: Path,
) -> None:
    root = write_project(tmp_path / "p", ["flaky", "hopeless", "sometimes", "steady"])
    run_id = run(root)
    gold, gold_lines = diagnosed(root, run_id, *GOLD, "--repeats", "2")
    replay, replay_lines = diagnosed(root, run_id, *TOP_K, "--repeats", "2")
    # What a single re-execution could not say: the wording of repeats, and their spread.
    assert (
        "Control: 1 of 4 passed in at least one of 2 re-executions without the intervention"
        in gold_lines
    )
    assert any(re.search(r"^Recovered under gold context: \d of 4; ", x) for x in gold_lines)
    assert any(x.startswith("Confirmed under top-k 2: ") for x in replay_lines)
    assert f"Labels from gold context (diagnosis {gold}): " in "\n".join(replay_lines)
    with serving(root) as url:
        pages = {address: fetch(f"{url}/diagnoses/{address}") for address in (gold, replay)}
    assert pages[gold][0] == pages[replay][0] == 200
    assert shown(pages[gold][1]) == gold_lines
    assert shown(pages[replay][1]) == replay_lines
    # The address in the carried labels' line is a link, as every address on a page is.
    assert f'href="/a/{gold}"' in pages[replay][1]


def test_a_black_box_diagnosis_shows_the_lines_the_cli_printed(tmp_path: Path) -> None:
    root = tmp_path / "box"
    root.mkdir()
    (root / "app.py").write_text(BLACK_BOX_APP)
    (root / "oloproof.yaml").write_text(BLACK_BOX_CONFIG)
    gold_context = [{"doc_id": "d1", "text": "yes"}]
    (root / "cases.jsonl").write_text(
        "".join(
            json.dumps(
                {
                    "id": f"c{i}",
                    "input": {},
                    "expected": {"answer": "yes", "gold_context": gold_context},
                }
            )
            + "\n"
            for i in range(3)
        )
    )
    done = oloproof("run", cwd=root)
    assert done.code == 0, done.out + done.err
    address, lines = diagnosed(root, done.lines[0].split()[1], *GOLD)
    assert "UNRESOLVED: 3 of 3, the system is not staged, so no case was re-executed" in lines
    with serving(root) as url:
        status, page = fetch(f"{url}/diagnoses/{address}")
    assert status == 200
    assert shown(page) == lines
