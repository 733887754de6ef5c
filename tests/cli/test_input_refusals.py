"""Input that would silently change meaning, or that used to fail late or with a traceback, is
refused up front: one sentence naming the file and line, exit 2, and no ledger is created."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.support import TOY_APP, oloproof

from ledger import open_ledger
from oloproof import events as ev

CONFIG = """\
system:
  name: toy
  version: "1"
  callable: app:run
concurrency: 2
evaluators:
  - {type: contains, criterion: echo, field: answer, expected_field: answer}
slices: [metadata.topic]
policy: policy.yaml
"""
POLICY = """\
version: 1
rules:
  - id: floor
    metric: echo
    min: 0.5
"""
CASE = {"id": "c1", "input": {"q": "x"}, "expected": {"answer": "x"}, "metadata": {"topic": "t"}}


def _project(root: Path) -> Path:
    (root / "app.py").write_text(TOY_APP)
    (root / "oloproof.yaml").write_text(CONFIG)
    (root / "policy.yaml").write_text(POLICY)
    second = {**CASE, "id": "c2", "metadata": {"topic": "u", "tier": 1}}
    (root / "cases.jsonl").write_text(json.dumps(CASE) + "\n" + json.dumps(second) + "\n")
    return root


def _config(text: str) -> Callable[[Path], None]:
    return lambda root: (root / "oloproof.yaml").write_text(text)


def _policy(text: str) -> Callable[[Path], None]:
    return lambda root: (root / "policy.yaml").write_text(text)


def _case_line(line: str) -> Callable[[Path], None]:
    """The cases file with a second line ``line`` after a good first one."""
    return lambda root: (root / "cases.jsonl").write_text(json.dumps(CASE) + "\n" + line + "\n")


def _case(**fields: object) -> Callable[[Path], None]:
    return _case_line(json.dumps({**CASE, "id": "c2", **fields}))


def _deep(levels: int) -> str:
    return "[" * levels + "]" * levels


REFUSALS: dict[str, tuple[Callable[[Path], None], str]] = {
    # -- duplicate keys: the second would silently replace the first
    "duplicate key in oloproof.yaml": (
        _config(CONFIG + "concurrency: 4\n"),
        "{root}/oloproof.yaml, line 10: key 'concurrency' appears twice in one mapping "
        "(first on line 5); the second would silently replace the first",
    ),
    "duplicate key in a policy": (
        _policy(POLICY + "rules: []\n"),
        "{root}/policy.yaml, line 6: key 'rules' appears twice in one mapping (first on line "
        "2); the second would silently replace the first",
    ),
    "duplicate key inside a rule": (
        _policy(POLICY + "    min: 0.1\n"),
        "{root}/policy.yaml, line 6: key 'min' appears twice in one mapping (first on line "
        "5); the second would silently replace the first",
    ),
    # -- booleans where numbers belong
    "boolean concurrency": (
        _config(CONFIG.replace("concurrency: 2", "concurrency: true")),
        "{root}/oloproof.yaml, line 5: concurrency: expected a number, found the boolean true",
    ),
    "boolean timeout_s": (
        _config(CONFIG + "timeout_s: true\n"),
        "{root}/oloproof.yaml, line 10: timeout_s: expected a number, found the boolean true",
    ),
    "boolean min": (
        _policy(POLICY.replace("min: 0.5", "min: true")),
        "{root}/policy.yaml, line 5: rules.0.min: expected a number, found the boolean true",
    ),
    "boolean k": (
        _config(CONFIG.replace("slices:", "  - {type: hit_rate, k: false}\nslices:")),
        "{root}/oloproof.yaml, line 8: evaluators.1.k: expected a number, found the boolean false",
    ),
    # -- a check that checks nothing (it passed every case that had the field)
    "empty regex": (
        _config(CONFIG.replace("slices:", "  - {type: regex, criterion: r, pattern: ''}\nslices:")),
        "{root}/oloproof.yaml, line 8: evaluators.1.pattern: an empty pattern matches every "
        "text, so it would check nothing",
    ),
    # -- contradictory bounds
    "min above max": (
        _policy(POLICY.replace("min: 0.5", "min: 0.9\n    max: 0.1")),
        "{root}/policy.yaml, line 3: rules.0: min 0.9 is above max 0.1: no metric can meet both",
    ),
    "min equal to max": (
        _policy(POLICY.replace("min: 0.5", "min: 0.7\n    max: 0.70")),
        "{root}/policy.yaml, line 3: rules.0: min and max are both 0.7: no finite number of "
        "cases gives an interval that lies within a single value, so the rule could never pass; "
        "give the range the metric may take (min: 0.6 with max: 0.8), or one bound",
    ),
    "a floor of 100%": (
        _policy(POLICY.replace("min: 0.5", "min: 1")),
        "{root}/policy.yaml, line 3: rules.0: min: 1 can never pass: no finite number of cases "
        "gives an interval that reaches it; for a rule that allows no failure at all, use kind: "
        "observed_count with max_failures: 0",
    ),
    "a ceiling of 0%": (
        _policy(POLICY.replace("min: 0.5", "max: 0.0")),
        "{root}/policy.yaml, line 3: rules.0: max: 0 can never pass: no finite number of cases "
        "gives an interval that reaches it; for a rule that allows no failure at all, use kind: "
        "observed_count with max_failures: 0",
    ),
    "a rule id given twice": (
        _policy(POLICY + "  - id: floor\n    metric: echo\n    min: 0.2\n"),
        "{root}/policy.yaml, line 6: rules.1.id: rule id 'floor' is also rule 0's (line 3); "
        "each rule's decision is reported by its id",
    ),
    "a criterion fed by two evaluators": (
        _config(
            CONFIG.replace(
                "slices:",
                "  - {type: equals, criterion: echo, field: answer, expected_field: answer}\n"
                "slices:",
            )
        ),
        "{root}/oloproof.yaml, line 8: evaluators.1: the criterion 'echo' is also evaluator 0's "
        "(line 7), and one metric cannot take the verdicts of two (give one of them another "
        "`criterion:`)",
    ),
    "two ids that differ only in their Unicode encoding": (
        lambda root: (root / "cases.jsonl").write_text(
            json.dumps({**CASE, "id": "caf\u00e9"})
            + "\n"
            + json.dumps({**CASE, "id": "cafe\u0301"})
        ),
        "{root}/cases.jsonl, line 2: case id 'cafe\\u0301' is the same text as 'caf\\xe9' on "
        "line 1, written with other Unicode code points (they look alike wherever they are "
        "shown); write both the same way, or rename one",
    ),
    # -- unknown keys in a case
    "unknown key in expected.relevant[]": (
        _case(expected={"answer": "x", "relevant": [{"doc_id": "d1", "grde": 2}]}),
        "{root}/cases.jsonl, line 2: expected.relevant[0] of case 'c2' has an unknown key "
        "'grde' (an entry has doc_id, chunk_id, grade)",
    ),
    "unknown key in expected.gold_context[]": (
        _case(expected={"gold_context": [{"doc_id": "d1", "text": "t", "source": "kb"}]}),
        "{root}/cases.jsonl, line 2: expected.gold_context[0] of case 'c2' has an unknown key "
        "'source' (an entry has doc_id, chunk_id, text)",
    ),
    "chunk_id that is not text": (
        _case(expected={"relevant": [{"doc_id": "d1", "chunk_id": 3}]}),
        "{root}/cases.jsonl, line 2: expected.relevant[0].chunk_id of case 'c2' must be a "
        "non-empty string or null",
    ),
    "a number where the evaluator compares text": (
        _case(expected={"answer": 42}),
        "{root}/cases.jsonl, line 2: expected.answer of case 'c2' must be text for 'echo', not int",
    ),
    # -- a slice no case can fill
    "slice key no case has": (
        _config(CONFIG.replace("metadata.topic", "metadata.topci")),
        "{root}/oloproof.yaml, line 8: slices: metadata.topci: no case has the metadata key "
        "'topci' (the cases' metadata keys: tier, topic)",
    ),
    "nested slice key no case has": (
        _config(CONFIG.replace("metadata.topic", "metadata.topic.name")),
        "{root}/oloproof.yaml, line 8: slices: metadata.topic.name: no case has a value at "
        "metadata.topic.name",
    ),
    # -- numbers and nesting beyond what can be recorded or parsed
    "case integer of 5,000 digits": (
        _case_line('{"id": "c2", "input": {"q": ' + "9" * 5000 + "}}"),
        "{root}/cases.jsonl, line 2: an integer of 5000 digits is outside -2**64 .. 2**64-1",
    ),
    "case nested 1,000 deep": (
        _case_line('{"id": "c2", "input": {"q": ' + _deep(1000) + "}}"),
        "{root}/cases.jsonl, line 2: nested deeper than 100 levels (the most a case may nest)",
    ),
    "case nested 450 deep": (
        _case_line('{"id": "c2", "input": {"q": ' + _deep(450) + "}}"),
        "{root}/cases.jsonl, line 2: field 'input' of case 'c2' is nested deeper than 100 "
        "levels (the most a case may nest)",
    ),
    "lone surrogate case id": (
        _case_line('{"id": "c\\ud800", "input": {"q": "x"}}'),
        "{root}/cases.jsonl, line 2: field 'id' holds a lone surrogate escape (\\uD800-\\uDFFF "
        "without its pair), which is not text",
    ),
    "yaml nested 1,000 deep": (
        _config(CONFIG + "extra: " + _deep(1000) + "\n"),
        "{root}/oloproof.yaml, line 10: nested deeper than 100 levels",
    ),
    "yaml integer of 5,000 digits": (
        _config(CONFIG.replace("concurrency: 2", "concurrency: " + "9" * 5000)),
        "{root}/oloproof.yaml, line 5: an integer of 5000 digits is outside -2**64 .. 2**64-1",
    ),
    "concurrency 2**70": (
        _config(CONFIG.replace("concurrency: 2", f"concurrency: {2**70}")),
        "{root}/oloproof.yaml, line 5: concurrency: the integer 1180591620717411303424 is "
        "outside -2**64 .. 2**64-1",
    ),
    "concurrency too large to run": (
        _config(CONFIG.replace("concurrency: 2", "concurrency: 1000000")),
        "{root}/oloproof.yaml, line 5: concurrency: Input should be less than or equal to 10000",
    ),
    "max_failures 2**80": (
        _policy(POLICY.replace("min: 0.5", f"kind: observed_count\n    max_failures: {2**80}")),
        "{root}/policy.yaml, line 6: rules.0.max_failures: the integer "
        "1208925819614629174706176 is outside -2**64 .. 2**64-1",
    ),
    "oloproof.yaml not UTF-8": (
        lambda root: (root / "oloproof.yaml").write_bytes(CONFIG.encode() + b"# caf\xe9\n"),
        f"{{root}}/oloproof.yaml, line 10: not UTF-8 text (byte {len(CONFIG.encode()) + 5})",
    ),
    "policy not UTF-8": (
        lambda root: (root / "policy.yaml").write_bytes(b"version: 1\n# \xff\n"),
        "{root}/policy.yaml, line 2: not UTF-8 text (byte 13)",
    ),
    "yaml that refers to itself": (
        _config(CONFIG + "extra: &loop [*loop]\n"),
        "{root}/oloproof.yaml, line 10: extra.0: a YAML alias that refers to the node holding it",
    ),
    # -- a key YAML allows and no setting has
    "a key that is a list": (
        _policy(POLICY + "? [a, b]\n: x\n"),
        "{root}/policy.yaml, line 6: (top level): a key must be a name, not a list",
    ),
    # -- YAML 1.1 booleans: a bare yes or off is read as true or false, wherever it stands
    "yes and no in an inline schema": (
        _config(
            CONFIG.replace(
                "slices:",
                "  - {type: json_schema, criterion: yn, schema: {enum: [yes, no]}}\nslices:",
            )
        ),
        "{root}/oloproof.yaml, line 8: evaluators.1.schema.enum.0: a bare yes is read by YAML as "
        'the boolean true; write true, or "yes" for the text',
    ),
    "off as a setting": (
        _config(
            CONFIG.replace(
                "expected_field: answer}", "expected_field: answer, case_sensitive: Off}"
            )
        ),
        "{root}/oloproof.yaml, line 7: evaluators.0.case_sensitive: a bare Off is read by YAML "
        'as the boolean false; write false, or "Off" for the text',
    ),
    # -- a gate that cannot block
    "a policy of no rules": (
        _policy("version: 1\nrules: []\n"),
        "{root}/policy.yaml, line 2: rules: a policy needs at least one rule (with none, any "
        "run would pass)",
    ),
    "a policy that does not block on FAIL": (
        _policy("version: 1\nblock_on: [INSUFFICIENT_EVIDENCE]\n" + POLICY[len("version: 1\n") :]),
        "{root}/policy.yaml, line 2: block_on: FAIL is not listed, so a rule that fails would "
        "pass the gate; list FAIL (INSUFFICIENT_EVIDENCE and MANUAL_REVIEW are yours to choose)",
    ),
    "a policy that blocks on nothing": (
        _policy("version: 1\nblock_on: []\n" + POLICY[len("version: 1\n") :]),
        "{root}/policy.yaml, line 2: block_on: FAIL is not listed, so a rule that fails would "
        "pass the gate; list FAIL (INSUFFICIENT_EVIDENCE and MANUAL_REVIEW are yours to choose)",
    ),
    "a confidence level far below any gate's": (
        _policy("version: 1\nconfidence_level: 0.01\n" + POLICY[len("version: 1\n") :]),
        "{root}/policy.yaml, line 2: confidence_level: 0.01 is outside 0.5 to 0.999: an "
        "interval at that level would not mean what a gate needs (0.95 is usual)",
    ),
    "a slice listed twice": (
        _config(
            CONFIG.replace("slices: [metadata.topic]", "slices: [metadata.topic, metadata.topic]")
        ),
        "{root}/oloproof.yaml, line 8: slices: 'metadata.topic' is listed twice, so each case "
        "would count twice in its rows",
    ),
    "a slice listed twice before one of no known kind": (
        _config(
            CONFIG.replace(
                "slices: [metadata.topic]", "slices: [metadata.topic, metadata.topic, input.q]"
            )
        ),
        "{root}/oloproof.yaml, line 8: slices: 'metadata.topic' is listed twice, so each case "
        "would count twice in its rows",
    ),
    "a slice of no known kind": (
        _config(CONFIG.replace("slices: [metadata.topic]", "slices: [metadata.topic, input.q]")),
        "{root}/oloproof.yaml, line 8: slices: unknown slice 'input.q' (use metadata.KEY, "
        "relevant_position or context_truncated)",
    ),
    "a policy without rules": (
        _policy("version: 1\n"),
        "{root}/policy.yaml, line 1: rules: required key is missing",
    ),
    # -- what a run would fail at, or record, only once it had started
    "a field path with an empty part": (
        _config(CONFIG.replace("field: answer,", "field: answer..x,")),
        "{root}/oloproof.yaml, line 7: evaluators.0.field: 'answer..x' has an empty part: "
        "name keys joined by single dots",
    ),
    "a NaN in an inline schema": (
        _config(
            CONFIG.replace(
                "slices:",
                "  - {type: json_schema, criterion: shaped, schema: {maximum: .nan}}\nslices:",
            )
        ),
        "{root}/oloproof.yaml, line 8: evaluators.1.schema: the schema cannot be recorded "
        "with the run: cannot encode the float nan: only finite floats are allowed",
    ),
    "a device as the dataset": (
        _config(CONFIG + "dataset: /dev/zero\n"),
        "{root}/oloproof.yaml, line 10: dataset: /dev/zero: cannot read it (a character "
        "device, not a regular file)",
    ),
    # -- a system reference that is not Python code
    "built-in function as the system": (
        _config(CONFIG.replace("app:run", "os:getcwd")),
        "{root}/oloproof.yaml, line 4: system.callable: 'os:getcwd' is not a function defined "
        "in Python source (found a builtin_function_or_method); Oloproof fingerprints a "
        "system by its source file, so wrap it in a function of your own",
    ),
}


@pytest.mark.parametrize("name", list(REFUSALS))
def test_bad_input_is_refused_before_the_ledger_is_touched(tmp_path: Path, name: str) -> None:
    root = _project(tmp_path)
    change, sentence = REFUSALS[name]
    change(root)
    result = oloproof("run", cwd=root)
    assert (result.code, result.err) == (2, f"error: {sentence.format(root=root)}\n"), name
    assert not (root / ".oloproof").exists()


UNSET = "OLOPROOF_TEST_NEVER_SET_TOKEN"


def test_a_header_variable_that_is_not_set_is_refused_when_planning(tmp_path: Path) -> None:
    assert UNSET not in os.environ
    root = _project(tmp_path)
    (root / "oloproof.yaml").write_text(
        CONFIG.replace(
            "  callable: app:run\n",
            "  http:\n"
            "    url: http://127.0.0.1:9/answer\n"
            f"    headers: {{Authorization: 'Bearer ${{{UNSET}}}'}}\n",
        )
    )
    result = oloproof("run", cwd=root)
    assert (result.code, result.err) == (
        2,
        f"error: {root}/oloproof.yaml, line 6: system.http.headers.Authorization: "
        f"environment variable {UNSET} is not set\n",
    )
    assert not (root / ".oloproof").exists()


OUTPUTS = """
import asyncio
import concurrent.futures

import pydantic

from oloproof import system

@system(name="toy", version="1")
def run(case):
    if case["q"] == "cycle":
        output = {"answer": "x", "more": {}}
        output["more"]["again"] = output
        return output
    if case["q"] == "deep":
        output = []
        for _ in range(500):
            output = [output]
        return {"answer": "x", "deep": output}
    if case["q"] == "keys":  # written as text, both keys are "1"
        return {"answer": "x", "by": {1: "the int", "1": "the text"}}
    # Objects whose text is only where they sit in memory: recorded, their text ("... at
    # 0x7f...>") differed on every run, and a judge read the address ("x" is in "0x7f...").
    if case["q"] == "generator":
        return {"answer": (word for word in ["x"])}
    if case["q"] == "object":
        return {"answer": "x", "parts": [Plain()]}
    if case["q"] == "coroutine":
        return {"answer": later()}
    if case["q"] == "inside":
        return {"answer": Holder(str.upper)}
    if case["q"] == "key":
        return {"answer": "x", "by": {Plain(): 1}}
    if case["q"] == "raises":  # its text cannot be made: it was a traceback
        return {"answer": Broken()}
    # The answer never collected, or an object whose text goes on after its address: their
    # text was recorded and judged ("<Future at 0x7f... state=finished returned dict>").
    if case["q"] == "future":
        return POOL.submit(str.upper, case["q"])
    if case["q"] == "queue":
        return {"answer": "x", "pending": asyncio.Queue()}
    if case["q"] == "model":  # a model whose fields JSON cannot hold: it was a traceback
        return {"answer": Reply(parts=Plain())}
    return {"answer": case["q"]}


POOL = concurrent.futures.ThreadPoolExecutor(1)


class Plain:
    pass


async def later():
    return "x"


class Holder:
    def __init__(self, made):
        self.made = made

    def __repr__(self):
        return f"Holder(made={self.made!r}, at={object()!r})"


class Broken:
    def __repr__(self):
        raise RuntimeError("no text for this")


class Reply(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(arbitrary_types_allowed=True)
    parts: object
"""

MEMORY = (
    "whose text shows where it sits in memory, which changes from run to run (a judge would "
    "read the address); return what it holds as plain data"
)


@pytest.mark.parametrize(
    ("question", "problem"),
    [
        ("cycle", "it contains itself (at output.more.again)"),
        ("deep", "it is nested deeper than 100 levels (at output.deep.0.0.0.0…)"),
        (
            "keys",
            "two keys of one mapping in it are the same text once written as text, 1 and '1': "
            "one of their values would be lost",
        ),
        ("generator", f"output.answer is a value of type generator, {MEMORY}"),
        ("object", f"output.parts.0 is a value of type Plain, {MEMORY}"),
        ("coroutine", f"output.answer is a value of type coroutine, {MEMORY} (await it)"),
        ("inside", f"output.answer is a value of type Holder, {MEMORY}"),
        ("key", f"a key of output.by is a value of type Plain, {MEMORY}"),
        (
            "future",
            "output is a value of type Future, an answer not yet collected: return its result "
            "(await it, or call .result())",
        ),
        ("queue", f"output.pending is a value of type Queue, {MEMORY}"),
        (
            "raises",
            "output.answer is a value of type Broken, whose text could not be made: "
            "RuntimeError: no text for this",
        ),
    ],
)
def test_an_output_that_cannot_be_recorded_stops_the_run_naming_the_case(
    tmp_path: Path, question: str, problem: str
) -> None:
    root = _project(tmp_path)
    (root / "app.py").write_text(OUTPUTS)
    (root / "cases.jsonl").write_text(
        json.dumps(CASE) + "\n" + json.dumps({**CASE, "id": "c2", "input": {"q": question}}) + "\n"
    )
    result = oloproof("run", cwd=root)
    assert (result.code, result.err) == (
        2,
        f"error: case 'c2': the output cannot be recorded: {problem}\n",
    )
    with open_ledger(root / ".oloproof") as ledger:
        states = [e.body["state"] for _, e in ledger.events(ev.RUN_END)]
        assert not list(ledger.events(ev.DECISION))
    assert states == ["stopped"]


def test_a_model_whose_fields_json_cannot_hold_stops_the_run_in_one_line(tmp_path: Path) -> None:
    root = _project(tmp_path)
    (root / "app.py").write_text(OUTPUTS)
    (root / "cases.jsonl").write_text(json.dumps({**CASE, "input": {"q": "model"}}) + "\n")
    result = oloproof("run", cwd=root)
    assert result.code == 2, result.out + result.err
    assert result.err.startswith(
        "error: case 'c1': the output cannot be recorded: output.answer is a value of type "
        "Reply, whose fields JSON cannot hold: "
    ), result.err
    assert result.err.count("\n") == 1, result.err


@pytest.mark.parametrize(
    ("option", "target", "problem"),
    [
        ("--junit", "reports", "it is a folder"),
        ("--summary", "cases.jsonl/summary.md", "cases.jsonl is not a folder"),
        ("--summary", "/proc/summary.md", None),  # /proc takes no new file, even from root
    ],
)
def test_a_report_path_that_cannot_be_written_is_refused_before_the_run(
    tmp_path: Path, option: str, target: str, problem: str | None
) -> None:
    # Found after the run, it left a recorded PASS and a process that exited 2.
    root = _project(tmp_path)
    (root / "reports").mkdir()
    result = oloproof("run", option, target, cwd=root)
    assert result.code == 2, result.out + result.err
    assert result.err.startswith(f"error: cannot write {target}: "), result.err
    if problem is not None:
        assert result.err == f"error: cannot write {target}: {problem}\n"
    assert not (root / ".oloproof").exists()


RAG_APP = """
from oloproof import Passage, Retrieval, rag_system

@rag_system(name="rag", version="1", {settings})
class Rag:
    def retrieve(self, input, depth):
        return Retrieval(candidates=(Passage(doc_id="d1", text="One two."),))

    def generate(self, input, context):
        return {{"answer": " ".join(item.text or "" for item in context.items)}}

    def count_tokens(self, passage):
        return len((passage.text or "").split())
"""


@pytest.mark.parametrize(
    ("settings", "refused"),
    [
        ("depth=2, top_k=1, token_budget=0", "token_budget=0"),
        ("depth=2, top_k=0", "top_k=0"),
        ("depth=0, top_k=1", "depth=0"),
        ("depth=2, top_k=True", "top_k=True"),
    ],
)
def test_a_rag_system_setting_below_one_in_the_decorator_is_refused(
    tmp_path: Path, settings: str, refused: str
) -> None:
    # oloproof.yaml refuses token_budget: 0; the decorator took it, and every passage was
    # dropped from every context.
    root = _project(tmp_path)
    (root / "app.py").write_text(RAG_APP.format(settings=settings))
    (root / "oloproof.yaml").write_text(
        'system: {name: rag, version: "1", rag: {object: "app:Rag"}}\n'
        "evaluators:\n  - {type: contains, criterion: echo, field: answer, expected_field: answer}\n"
    )
    result = oloproof("run", cwd=root)
    name = refused.split("=")[0]
    assert (result.code, result.out) == (2, ""), result.err
    assert result.err == (
        f"error: {root}/oloproof.yaml, line 1: system.rag.object: importing 'app' failed: "
        f"@rag_system({refused}): {name} must be a whole number, 1 or more, as in "
        "oloproof.yaml\n"
    )
    assert not (root / ".oloproof").exists()
