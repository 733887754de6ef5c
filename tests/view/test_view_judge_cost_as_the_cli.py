"""A judge's cost on the run page is the number ``run`` prints, never rounded onto nothing.

The probe: the judge_gate example (12 judge calls) with prices a thousandth of its own.
``run`` printed the judge's cost as ``3.5955e-07``; the viewer's run page, which wrote every
cost with ``%.4f``, printed ``0.0000``, a priced judge shown as free (and the example's own
0.00035955 as ``0.0004``). The page now writes the cost as ``run`` does, from one function.
"""

from __future__ import annotations

from pathlib import Path

from tests.support import oloproof, serving_judge_gate
from tests.view.support import RUN_ID

ENV = {"JUDGE_GATE_KEY": "sk-judge-cost-test-7c1e"}


def test_the_page_prints_the_cost_run_prints(tmp_path: Path) -> None:
    with serving_judge_gate(tmp_path) as (root, _server):
        config = root / "oloproof.yaml"
        text = config.read_text()
        for price in ("0.00000015", "0.0000006"):
            assert f": {price}" in text
            text = text.replace(f": {price}", f": {price}e-3")
        config.write_text(text)
        done = oloproof("run", cwd=root, env=ENV)
    assert done.code in (0, 3), done.out + done.err
    (row,) = [line for line in done.lines if line.startswith("│ groundedness │ openai")]
    cost = row.split("│")[-2].strip()
    assert cost == "3.5955e-07", row
    run_id = RUN_ID.findall(done.out)[0]
    site = tmp_path / "site"
    exported = oloproof("view", "--export", str(site), run_id, cwd=root)
    assert exported.code == 0, exported.out + exported.err
    page = (site / "runs" / run_id / "index.html").read_text()
    # Was: <td class="num">0.0000</td>.
    assert f'<td class="num">{cost}</td></tr>' in page
