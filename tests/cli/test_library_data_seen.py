"""A prompt or a table held in a standard-library object is part of the code fingerprint.

A ``string.Template`` (or a ``SimpleNamespace``, a mapping proxy, a deque, a chain map, an
array) was an object the fingerprint could not read: editing the text it held reused every
execution made with the old text, and the second run reported the old answers as the new
code's. A ``defaultdict``'s factory (the text a key not in it reads) was not even listed as
unseen. The run now executes again, and says nothing about state it cannot see.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support import bundle_cases, echo_project, oloproof

HOLDERS = {
    "template": ("string.Template('$q WORDING')", "HELD.substitute(q=case['q'])"),
    "namespace": ("types.SimpleNamespace(suffix='WORDING')", "case['q'] + ' ' + HELD.suffix"),
    "mapping proxy": (
        "types.MappingProxyType({'suffix': 'WORDING'})",
        "case['q'] + ' ' + HELD['suffix']",
    ),
    "deque": ("collections.deque(['WORDING'], maxlen=3)", "case['q'] + ' ' + HELD[0]"),
    "chain map": (
        "collections.ChainMap({'suffix': 'WORDING'})",
        "case['q'] + ' ' + HELD['suffix']",
    ),
    "array": ("array.array('u', 'WORDING')", "case['q'] + ' ' + HELD.tounicode()"),
    "default factory": (
        "collections.defaultdict(lambda: 'WORDING', {'known': 'other'})",
        "case['q'] + ' ' + HELD['unknown']",
    ),
}

APP = """
import array
import collections
import string
import types

from oloproof import system

HELD = {holder}


@system(name="held", version="1")
def answer(case):
    return {{"answer": {use}}}
"""

CONFIG = """
system: {name: held, version: "1", callable: app:answer}
dataset: cases.jsonl
evaluators:
  - {type: contains, criterion: echoed, field: answer, expected_field: answer}
"""


@pytest.mark.parametrize("kind", sorted(HOLDERS))
def test_an_edit_to_data_in_a_library_object_executes_the_case_again(
    tmp_path: Path, kind: str
) -> None:
    holder, use = HOLDERS[kind]
    app = APP.format(holder=holder, use=use)
    root = echo_project(tmp_path / "held", app.replace("WORDING", "first"), CONFIG, ["q1"])
    first = oloproof("run", cwd=root)
    assert first.code == 0, first.out + first.err
    (root / "app.py").write_text(app.replace("WORDING", "second"))
    again = oloproof("run", cwd=root)
    assert again.code == 0, again.out + again.err
    assert "Cache: execution 0 hit/1 miss; judgment 0 hit/1 miss" in again.lines, again.out
    assert not any("Not seen by the code fingerprint" in line for line in again.lines)
    (case,) = bundle_cases(root, again.out.split()[1])
    assert case["output"]["answer"] == "q1 second"
