"""`oloproof diagnose` on BM25 (bm25s) over the docstrings of standard-library modules, through
the real CLI: the ways a real corpus and a real model make a diagnosis credit or blame wrongly.

The corpus is the docstrings of about thirty modules that ship with Python, each module a
document cut into chunks of a fixed number of words (``c0``, ``c1``, ...): some 300 passages of
real prose. Questions are two of a passage's words, as a user types them, so many passages tie
or share them. Every expectation is computed here, from the corpus and the project's own
generator, never read from the diagnosis under test:

- cases that ask the same question with other gold passages: the gold-context run gives each
  its own passages, never another case's (the executions of one input are otherwise shared);
- a model that does not answer the same way twice (made repeatable: right on the calls a file
  beside it counts out), whose control was handed the very passages the gold run hands it: a
  pass with the gold passages is its own variation, not a recovery;
- a corpus re-chunked after the cases were labelled: a recovery with a gold passage whose text
  the retrieval holds under its doc_id and chunk_id no longer names the stage that failed;
- a run with ``--repeats`` whose cases failed in some repeats and passed in others: they are
  counted and named, never dropped without a word.
"""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from tests.support import diagnosis_release, oloproof

CORPUS = '''
"""The docstrings of standard-library modules, each module a document cut into chunks."""

import importlib
import re
from functools import lru_cache

MODULES = (
    "argparse", "ast", "base64", "bisect", "calendar", "configparser", "contextlib", "copy",
    "csv", "dataclasses", "difflib", "doctest", "fnmatch", "fractions", "glob", "gzip",
    "hashlib", "heapq", "hmac", "json", "pdb", "pickle", "pprint", "queue", "random", "sched",
    "secrets", "shutil", "statistics", "string", "struct", "tempfile", "textwrap", "timeit",
    "tokenize", "uuid", "zlib",
)
WORDS = {words}


def words(text):
    return re.findall(r"[a-z][a-z0-9_]+", text.lower())


def sentences(text):
    return [s for s in re.split(r"(?<=[.!?])\\s+", text.strip()) if s]


def chunks(size):
    """Each module's docstring cut into paragraphs, each paragraph into pieces of ``size``
    words (a piece of fewer than 6 is left out): ``(doc_id, chunk_id, text)``."""
    found = []
    for name in MODULES:
        n = 0
        for paragraph in re.split(r"\\n\\s*\\n", importlib.import_module(name).__doc__ or ""):
            tokens = paragraph.split()
            for start in range(0, len(tokens), size):
                piece = tokens[start : start + size]
                if len(piece) >= 6:
                    found.append((name, f"c{{n}}", " ".join(piece)))
                    n += 1
    return found


@lru_cache(maxsize=1)
def passages():
    return tuple(chunks(WORDS))
'''

APP = '''
import json
from functools import lru_cache
from pathlib import Path

import bm25s
from corpus import passages, sentences, words

from oloproof import Passage, Retrieval, rag_system

CALLS = Path(__file__).with_name("calls.json")
RIGHT_ON = {right_on}


@lru_cache(maxsize=1)
def index():
    found = bm25s.BM25()
    texts = [text for _, _, text in passages()]
    found.index(bm25s.tokenize(texts, stopwords="en", show_progress=False), show_progress=False)
    return found


def search(question, depth):
    query = bm25s.tokenize([question], stopwords="en", show_progress=False)
    found, scores = index().retrieve(query, k=depth, show_progress=False)
    return [(int(i), float(s)) for i, s in zip(found[0], scores[0], strict=True)]


def answer(question, texts):
    """The sentence of ``texts`` (``(doc_id, text)`` in order) sharing most words with the
    question, the first on a tie."""
    asked = set(words(question))
    best = None
    for doc_id, text in texts:
        for sentence in sentences(text):
            shared = len(asked & set(words(sentence)))
            if best is None or shared > best[0]:
                best = (shared, sentence, doc_id)
    if best is None:
        return {{"answer": "", "citations": []}}
    return {{"answer": best[1], "citations": [best[2]]}}


def call_number(question):
    """How many times generate has been asked ``question``, this call included."""
    calls = json.loads(CALLS.read_text()) if CALLS.exists() else {{}}
    calls[question] = calls.get(question, 0) + 1
    CALLS.write_text(json.dumps(calls))
    return calls[question]


@rag_system(name="stdlib", version="1", depth=10, top_k=3)
class Extractive:
    def retrieve(self, input, depth):
        corpus = passages()
        return Retrieval(query=input["question"], depth=depth, candidates=tuple(
            Passage(doc_id=corpus[i][0], chunk_id=corpus[i][1], score=score, text=corpus[i][2])
            for i, score in search(input["question"], depth)
        ))

    def generate(self, input, context):
        return answer(input["question"], [(i.doc_id, i.text or "") for i in context.items])


@rag_system(name="stdlib", version="1", depth=10, top_k=1)
class Sampled(Extractive):
    """A model at a non-zero temperature, made repeatable: it answers from its context only on
    the calls of a question that RIGHT_ON lists, and says nothing useful on the others."""

    def generate(self, input, context):
        if call_number(input["question"]) in RIGHT_ON:
            return Extractive.generate(self, input, context)
        return {{"answer": "I am not sure.", "citations": []}}
'''

CONFIG = """
system:
  name: stdlib
  version: "1"
  rag: {{object: app:{cls}, index_version: "{words}"}}
dataset: cases.jsonl
concurrency: 1
evaluators:
  - {{type: contains, criterion: answer_correct, field: answer, expected_field: answer}}
  - {{type: hit_rate, k: {top_k}, relevance_unit: chunk}}
"""

GOLD = ("--intervention", "gold-context", "--criterion", "answer_correct")
STAGES = ("RETRIEVAL_MISS", "RANKED_OUT", "CONTEXT_ASSEMBLY_LOSS")


def project(
    root: Path, *, cls: str = "Extractive", words: int = 40, right_on: str = "set()"
) -> Path:
    """A project in ``root`` over chunks of ``words`` words (its cases still to write)."""
    root.mkdir()
    (root / "corpus.py").write_text(CORPUS.format(words=words))
    (root / "app.py").write_text(APP.format(right_on=right_on))
    top_k = 3 if cls == "Extractive" else 1
    (root / "oloproof.yaml").write_text(CONFIG.format(cls=cls, words=words, top_k=top_k))
    return root


def module(root: Path, name: str) -> ModuleType:
    """The project's module ``name``, loaded here (``corpus`` first, which ``app`` imports)."""
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    sys.modules.pop(name, None)
    spec = importlib.util.spec_from_file_location(name, root / f"{name}.py")
    assert spec is not None and spec.loader is not None
    loaded = importlib.util.module_from_spec(spec)
    sys.modules[name] = loaded
    spec.loader.exec_module(loaded)
    return loaded


@pytest.fixture
def loaded() -> Iterator[None]:
    """Leave no project module behind for the next test."""
    path = list(sys.path)
    yield
    sys.path[:] = path
    for name in ("corpus", "app"):
        sys.modules.pop(name, None)


def write_cases(root: Path, cases: list[dict[str, Any]]) -> None:
    (root / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))


def case(passage: tuple[str, str, str], question: str, answer: str) -> dict[str, Any]:
    doc_id, chunk_id, text = passage
    return {
        "id": f"{doc_id}:{chunk_id}",
        "input": {"question": question},
        "expected": {
            "answer": answer,
            "relevant": [{"doc_id": doc_id, "chunk_id": chunk_id}],
            "gold_context": [{"doc_id": doc_id, "chunk_id": chunk_id, "text": text}],
        },
    }


def ok(root: Path, *args: str) -> list[str]:
    done = oloproof(*args, cwd=root, timeout=300)
    assert done.code == 0, done.out + done.err
    return done.lines


def run(root: Path, *args: str) -> str:
    done = oloproof("run", *args, cwd=root, timeout=300)
    assert done.code in (0, 1, 3), done.out + done.err
    return done.lines[0].split()[1]


def earlier(root: Path, *args: str) -> list[str]:
    """``oloproof ARGS`` as an earlier release runs it: one that wrote diagnoses of schema 6 and
    made none of the checks these tests are about."""
    done = subprocess.run(
        [sys.executable, *diagnosis_release(6), *args],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout.splitlines()


def verified(root: Path, diagnosis: str) -> None:
    """The diagnosis re-derives from the ledger, and so does every other stored summary."""
    assert ok(root, "diagnose", "--verify", diagnosis)[0].startswith(f"Diagnosis {diagnosis}: ")
    assert oloproof("verify", cwd=root).code == 0


def line(lines: list[str], prefix: str) -> str:
    (found,) = [text for text in lines if text.startswith(prefix)]
    return found


def diagnosis_address(lines: list[str]) -> str:
    return line(lines, "Diagnosis sha256:").split()[1]


def case_lines(root: Path, diagnosis: str) -> dict[str, str]:
    """``inspect DIAGNOSIS``'s line of each case, by case id (ids hold a colon)."""
    found = {}
    for text in ok(root, "inspect", diagnosis):
        if not text.startswith(("Excluded", "  ")):
            case_id, rest = re.split(r": (?=[A-Z])", text, maxsplit=1)
            found[case_id] = rest
    return found


# -- cases asking one question with other gold passages -------------------------------------


def shared_question(corpus: ModuleType, app: ModuleType) -> list[dict[str, Any]]:
    """Four cases asking one question, each about a passage holding both its words, whose own
    passage alone gives the generator its expected answer (so each recovers with its own gold
    passage, by construction), no expected answer inside another."""
    passages = corpus.passages()
    pairs: dict[tuple[str, str], list[int]] = {}
    for n, (_, _, text) in enumerate(passages):
        found = sorted({w for w in corpus.words(text) if len(w) > 5})
        for i, first in enumerate(found):
            for second in found[i + 1 :]:
                pairs.setdefault((first, second), []).append(n)
    for (first, second), numbers in sorted(pairs.items(), key=lambda p: (-len(p[1]), p[0])):
        question = f"{first} {second}"
        chosen: list[dict[str, Any]] = []
        for n in numbers:
            expected = app.answer(question, [passages[n][::2]])["answer"]
            if len(expected.split()) < 6 or any(
                expected in c["expected"]["answer"] or c["expected"]["answer"] in expected
                for c in chosen
            ):
                continue
            chosen.append(case(passages[n], question, expected))
            if len(chosen) == 4:
                return chosen
    raise AssertionError("no question is shared by four passages")


def test_each_case_is_given_its_own_gold_passages_when_cases_share_a_question(
    tmp_path: Path, loaded: None
) -> None:
    root = project(tmp_path / "p")
    cases = shared_question(module(root, "corpus"), module(root, "app"))
    write_cases(root, cases)
    run_id = run(root)
    lines = ok(root, "diagnose", run_id, *GOLD)
    # The run answered all four with one execution, so at most one passed; each of the others
    # recovers with its own gold passage, which alone gives its expected answer.
    n = int(line(lines, "Selected: ").split()[1])
    assert n >= 3
    assert (
        line(lines, "Recovered under gold context: ") == f"Recovered under gold context: {n} of {n}"
    )
    assert not any(text.startswith("GENERATION_FAILURE") for text in lines)
    gold_run = line(lines, "Child runs: ").split()[4].rstrip(",")
    by_id = {c["id"]: c for c in cases}
    for case_id, text in case_lines(root, diagnosis_address(lines)).items():
        assert "strength intervention_recovery" in text, (case_id, text)
        shown = json.loads("\n".join(ok(root, "inspect", gold_run, "--case", case_id, "--json")))
        items = shown["artifacts"]["context/v1"][0]["items"]
        given = [{k: i[k] for k in ("doc_id", "chunk_id", "text")} for i in items]
        assert given == by_id[case_id]["expected"]["gold_context"]
    assert oloproof("verify", cwd=root).code == 0


# -- a model that does not answer the same way twice ----------------------------------------


def own_question(
    corpus: ModuleType, app: ModuleType, rank: int, skip: frozenset[str] = frozenset()
) -> dict[str, Any]:
    """A case about the first passage that BM25 ranks ``rank`` (from 1) for a question of two
    of its words, whose text alone gives the generator an answer of six words or more."""
    passages = corpus.passages()
    for n, passage in enumerate(passages):
        found = [w for w in dict.fromkeys(corpus.words(passage[2])) if len(w) > 5]
        if len(found) < 2 or f"{passage[0]}:{passage[1]}" in skip:
            continue
        question = f"{found[0]} {found[1]}"
        ranked = [i for i, _ in app.search(question, 10)]
        expected = app.answer(question, [passage[::2]])["answer"]
        placed = ranked.index(n) + 1 if n in ranked else None
        if placed == rank and len(expected.split()) >= 6:
            return case(passage, question, expected)
    raise AssertionError(f"no passage is ranked {rank} for its own question")


UNCHANGED = (
    "UNRESOLVED: 1 of 2, passed with the gold passages, but the control had handed the model "
    "those very passages, so the pass is the system's own variation, not a recovery"
)


def test_a_pass_with_the_gold_passages_the_control_was_given_is_not_a_recovery(
    tmp_path: Path, loaded: None
) -> None:
    # Right only on the second (and fourth) call of a question: the run (call 1) and the
    # control (call 3) fail, the gold run (call 2) passes, whatever each was given.
    root = project(tmp_path / "p", cls="Sampled", right_on="{2, 4}")
    corpus, app = module(root, "corpus"), module(root, "app")
    first = own_question(corpus, app, rank=1)  # top_k 1: the control is handed its gold passage
    second = own_question(corpus, app, rank=2, skip=frozenset({first["id"]}))
    write_cases(root, [first, second])
    run_id = run(root)
    lines = ok(root, "diagnose", run_id, *GOLD)
    assert lines[:5] == [
        "Selected: 2 failed cases with gold context (observed; no population claim)",
        "Control: 0 of 2 passed when re-executed without the intervention",
        "Recovered under gold context: 1 of 2",
        "RANKED_OUT: 1 of 2, recovered; relevant evidence was retrieved below the top-k cut",
        UNCHANGED,
    ]
    shown = case_lines(root, diagnosis_address(lines))
    assert shown == {
        first["id"]: "UNRESOLVED, context_unchanged, strength none, best relevant position 1",
        second["id"]: "RANKED_OUT, relevant_ranked_out, strength intervention_recovery, best "
        "relevant position 2",
    }
    verified(root, diagnosis_address(lines))
    # The earlier release (gold run: call 4, control: call 5) credited the pass, and its
    # diagnosis still reads and re-derives as it was made.
    before = earlier(root, "diagnose", run_id, *GOLD)
    assert before[2] == "Recovered under gold context: 2 of 2"
    assert case_lines(root, diagnosis_address(before))[first["id"]] == (
        "UNRESOLVED, recovers_only_with_gold_alone, strength intervention_recovery, best "
        "relevant position 1"
    )
    verified(root, diagnosis_address(before))


# -- a corpus re-chunked after its cases were labelled --------------------------------------


def labelled_earlier(corpus: ModuleType) -> list[dict[str, Any]]:
    """Cases labelled against the corpus cut into 40-word chunks: every ninth chunk's longest
    sentence, asked as its two words most common in the corpus."""
    from bm25s.stopwords import STOPWORDS_EN

    chunks = corpus.chunks(40)
    frequency: dict[str, int] = {}
    for _, _, text in chunks:
        for word in set(corpus.words(text)):
            frequency[word] = frequency.get(word, 0) + 1
    cases = []
    for passage in chunks[::9]:
        long = [s for s in corpus.sentences(passage[2]) if len(s.split()) >= 8]
        if not long:
            continue
        key = max(long, key=len)
        content = [w for w in dict.fromkeys(corpus.words(key)) if w not in STOPWORDS_EN]
        if len(content) >= 3:
            content.sort(key=lambda w: (-frequency[w], w))
            cases.append(case(passage, " ".join(content[:2]), key))
    return cases


def held_otherwise(gold: dict[str, Any], candidates: list[dict[str, Any]]) -> bool:
    """Whether the retrieval holds the gold passage's doc_id and chunk_id with text that does
    not hold the gold passage's."""
    text = " ".join(gold["text"].split())
    return any(
        (c["doc_id"], c.get("chunk_id")) == (gold["doc_id"], gold["chunk_id"])
        and text not in " ".join(c["text"].split())
        for c in candidates
    )


def expected_label(app: ModuleType, record: dict[str, Any]) -> str:
    """The label of a failed case, worked out from what the run recorded and the generator."""
    expected = record["expected"]
    (gold,) = expected["gold_context"]
    relevant = (gold["doc_id"], gold["chunk_id"])
    answered = app.answer(record["input"]["question"], [(gold["doc_id"], gold["text"])])
    if expected["answer"] not in answered["answer"]:
        return "GENERATION_FAILURE, fails_with_gold_context"
    candidates = record["artifacts"]["retrieval/v1"][0]["candidates"]
    if held_otherwise(gold, candidates):
        return "UNRESOLVED, gold_text_differs"
    ranked = [(c["doc_id"], c.get("chunk_id")) for c in candidates]
    if relevant not in ranked:
        return "RETRIEVAL_MISS, relevant_not_retrieved"
    if ranked.index(relevant) >= 3:
        return "RANKED_OUT, relevant_ranked_out"
    items = record["artifacts"]["context/v1"][0]["items"]
    if relevant not in [(i["doc_id"], i.get("chunk_id")) for i in items]:
        return "CONTEXT_ASSEMBLY_LOSS, relevant_dropped_from_context"
    return "UNRESOLVED, recovers_only_with_gold_alone"


def test_a_gold_passage_the_corpus_no_longer_holds_names_no_stage(
    tmp_path: Path, loaded: None
) -> None:
    root = project(tmp_path / "p", words=25)  # the corpus, re-chunked since it was labelled
    corpus, app = module(root, "corpus"), module(root, "app")
    write_cases(root, labelled_earlier(corpus))
    run_id = run(root)
    ok(root, "export", run_id)
    bundle = root / ".oloproof" / "bundles" / run_id / "cases.jsonl"
    records = [json.loads(text) for text in bundle.read_text().splitlines()]
    failed = {r["id"]: r for r in records if r["verdicts"]["answer_correct"]["s"] == "fail"}
    lines = ok(root, "diagnose", run_id, *GOLD)
    shown = case_lines(root, diagnosis_address(lines))
    assert set(shown) == set(failed)
    got = {case_id: ", ".join(text.split(", ")[:2]) for case_id, text in shown.items()}
    want = {case_id: expected_label(app, record) for case_id, record in failed.items()}
    assert got == want
    differs = [c for c, label in want.items() if label == "UNRESOLVED, gold_text_differs"]
    assert len(differs) >= 2, "the re-chunked corpus holds other text under some gold ids"
    assert f"UNRESOLVED: {len(differs)} of {len(failed)}, recovered, but the retrieval holds " in (
        "\n".join(lines)
    )
    assert oloproof("verify", cwd=root).code == 0


# -- a run with repeats ---------------------------------------------------------------------


def test_cases_that_failed_in_some_repeats_are_counted_and_named(
    tmp_path: Path, loaded: None
) -> None:
    # Right on the second and third calls of a question: each case fails its first repeat only.
    root = project(tmp_path / "p", cls="Sampled", right_on="{2, 3}")
    corpus, app = module(root, "corpus"), module(root, "app")
    first = own_question(corpus, app, rank=1)
    second = own_question(corpus, app, rank=1, skip=frozenset({first["id"]}))
    hopeless = own_question(corpus, app, rank=2)  # an answer no passage holds: fails every time
    hopeless["expected"]["answer"] = "no passage says this"
    write_cases(root, [first, second, hopeless])
    run_id = run(root, "--repeats", "3")
    lines = ok(root, "diagnose", run_id, *GOLD)
    assert lines[:6] == [
        "Selected: 1 failed case with gold context (observed; no population claim)",
        "Excluded: 2 cases that failed answer_correct in some repeats of the parent run and "
        "not in others (failed_in_some_repeats), so they are unstable without any "
        f"intervention - oloproof inspect {run_id} --failures shows their repeats",
        "Control: 0 of 1 passed when re-executed without the intervention",
        "Recovered under gold context: 0 of 1",
        "GENERATION_FAILURE: 1 of 1, still failed with the gold context",
        lines[5],
    ]
    assert lines[5].startswith("Diagnosis sha256:")
    inspected = ok(root, "inspect", diagnosis_address(lines))
    assert inspected[-2:] == [
        lines[1],
        "  "
        + ", ".join(
            f"{c['id']} (failed in 1 of 3 repeats)"
            for c in sorted([first, second], key=lambda c: c["id"])
        ),
    ]
    # With every failure one that passed in another repeat, nothing is said to have failed.
    write_cases(root, [first, second])
    (root / "calls.json").unlink()
    only_unstable = run(root, "--repeats", "3")
    lines = ok(root, "diagnose", only_unstable, *GOLD)
    assert lines[2] == (
        "Nothing was re-executed: every case that failed answer_correct in the parent run "
        "passed in another of its repeats."
    )
    verified(root, diagnosis_address(lines))
    # The earlier release said no case failed; its diagnosis re-derives as it was made.
    before = earlier(root, "diagnose", only_unstable, *GOLD)
    assert before[1] == "Nothing was re-executed: no case failed answer_correct in the parent run."
    verified(root, diagnosis_address(before))
