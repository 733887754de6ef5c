"""cases.jsonl: every mistake names the file and the line."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from oloproof.dataset import load_dataset
from oloproof.errors import DatasetError

GOOD = {"id": "a", "input": {"question": "q"}, "expected": {"answer": "x"}, "metadata": {}}


def write(tmp_path: Path, lines: list[str]) -> Path:
    path = tmp_path / "cases.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def error_of(path: Path) -> str:
    with pytest.raises(DatasetError) as info:
        load_dataset(path)
    return str(info.value)


def test_loads_cases_in_order_with_digest(tmp_path: Path) -> None:
    second = {**GOOD, "id": "b"}
    path = write(tmp_path, [json.dumps(GOOD), "", json.dumps(second)])
    dataset = load_dataset(path)
    assert [c.id for c in dataset.cases] == ["a", "b"]
    assert [c.line for c in dataset.cases] == [1, 3]
    assert len(dataset.digest) == 64


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("{not json", "line 2: not valid JSON"),
        ("[1, 2]", "line 2: a case must be a JSON object, found an array"),
        (
            '{"id": "b", "input": "hello"}',
            "line 2: field 'input' of case 'b' must be a JSON object, found a string",
        ),
        ('{"id": "b"}', "line 2: case 'b' has no 'input'"),
        ('{"id": "", "input": {}}', "line 2: field 'id' must be a non-empty string"),
        ('{"id": "a", "input": {}}', "line 2: duplicate case id 'a' (first on line 1)"),
        ('{"id": "b", "input": {}, "extra": 1}', "line 2: unknown field 'extra'"),
        (
            '{"id": "b", "input": {}, "expected": {"relevant": [{"grade": 1}]}}',
            "line 2: expected.relevant[0].doc_id of case 'b' must be a non-empty string",
        ),
        (
            '{"id": "b", "input": {}, "expected": {"gold_context": [{"doc_id": "d"}]}}',
            "line 2: expected.gold_context[0].text of case 'b' must be a non-empty string",
        ),
        # JSON parsers accept these; the ledger cannot record them, so they never reach a run.
        ('{"id": "b", "input": {"x": NaN}}', "line 2: NaN is not a JSON number"),
        ('{"id": "b", "input": {"x": -Infinity}}', "line 2: -Infinity is not a JSON number"),
        ('{"id": "b", "input": {"x": 1e400}}', "line 2: the number 1e400 is too large to record"),
        (
            '{"id": "b", "input": {}, "metadata": {"n": 18446744073709551616}}',
            "line 2: the integer 18446744073709551616 is outside -2**64 .. 2**64-1",
        ),
        (
            '{"id": "b", "input": {}, "expected": {"answer": "\\udc00"}}',
            "line 2: field 'expected' of case 'b' holds a lone surrogate escape",
        ),
    ],
)
def test_bad_lines_name_the_line(tmp_path: Path, line: str, expected: str) -> None:
    path = write(tmp_path, [json.dumps(GOOD), line])
    message = error_of(path)
    assert message.startswith(f"{path}, {expected}")


def test_numbers_at_the_edges_and_paired_surrogates_load(tmp_path: Path) -> None:
    line = (
        '{"id": "b", "input": {"big": 18446744073709551615, "low": -18446744073709551616, '
        '"f": 1.5e308, "smile": "\\ud83d\\ude00", "slash": "\\\\ud800"}}'
    )
    case = load_dataset(write(tmp_path, [line])).cases[0]
    assert case.input == {
        "big": 2**64 - 1,
        "low": -(2**64),
        "f": 1.5e308,
        "smile": "\N{GRINNING FACE}",
        "slash": "\\ud800",
    }


def test_cases_read_as_a_sequence_and_parse_the_same_every_time(tmp_path: Path) -> None:
    lines = [json.dumps({**GOOD, "id": f"c{i}", "metadata": {"i": i}}) for i in range(5)]
    path = tmp_path / "cases.jsonl"
    # CRLF endings, a blank line, and a U+2028 inside a string, which is not a line break.
    path.write_bytes(
        ("\r\n".join(lines[:2]) + "\r\n\r\n" + "\n".join(lines[2:])).encode()
        + b'\n{"id": "sep", "input": {"q": "a\xe2\x80\xa8b"}}'
    )
    cases = load_dataset(path).cases
    assert len(cases) == 6
    assert [c.id for c in cases] == ["c0", "c1", "c2", "c3", "c4", "sep"]
    assert [c.line for c in cases] == [1, 2, 4, 5, 6, 7]
    assert cases[-1].input == {"q": "a\u2028b"}
    assert cases[2] == cases[2] and cases[2] is not cases[2]  # parsed again, equal
    assert [c.metadata for c in cases[1:4]] == [{"i": 1}, {"i": 2}, {"i": 3}]
    assert list(cases) == list(cases)
    with pytest.raises(IndexError):
        cases[6]


def test_many_cases_read_back_in_any_order_as_each_line_says(tmp_path: Path) -> None:
    """Cases are kept compressed, a block of lines at a time: read in any order, from any
    block and across the edges of blocks, each is its own line parsed (the reference)."""
    lines = [
        json.dumps({**GOOD, "id": f"c{i}", "expected": {"answer": "x" * (i % 97)}})
        for i in range(1300)
    ]
    path = write(tmp_path, lines)
    cases = load_dataset(path).cases
    order = [1299, 0, 255, 256, 257, 511, 512, 1024, 3, 1298, 700, 256]
    for i in order:
        case = cases[i]
        assert (case.id, case.expected, case.line) == (
            f"c{i}",
            json.loads(lines[i])["expected"],
            i + 1,
        )
    assert [c.id for c in cases] == [f"c{i}" for i in range(1300)]


def test_a_repeated_id_is_found_among_many_and_before_a_later_bad_line(tmp_path: Path) -> None:
    lines = [json.dumps({**GOOD, "id": f"c{i}"}) for i in range(2000)]
    repeated = [*lines[:1500], json.dumps({**GOOD, "id": "c7"}), *lines[1500:]]
    assert error_of(write(tmp_path, repeated)).endswith(
        "line 1501: duplicate case id 'c7' (first on line 8)"
    )
    # The file's first mistake is reported, whatever is wrong further down.
    assert error_of(write(tmp_path, [*repeated, '{"id": "late"}'])).endswith(
        "line 1501: duplicate case id 'c7' (first on line 8)"
    )
    assert error_of(write(tmp_path, [*lines, '{"id": "late"}'])).endswith(
        "line 2001: case 'late' has no 'input'"
    )


def test_empty_and_missing_files(tmp_path: Path) -> None:
    assert error_of(write(tmp_path, [""])).endswith("no cases (the file is empty)")
    assert error_of(tmp_path / "none.jsonl").endswith("no such file")


def test_a_file_read_line_by_line_keeps_its_digest_lines_and_byte_offsets(tmp_path: Path) -> None:
    """The file is read a line at a time: blank lines before, inside and at the edges of the
    compressed blocks, CRLF endings and no final newline change no case, line or digest (the
    references: each line parsed alone, and the SHA-256 of the whole file's bytes)."""
    text, expected = b"", []
    for i in range(600):
        if i in (0, 255, 256, 257, 511, 599):
            text += b"\n  \r\n"
        line = json.dumps({**GOOD, "id": f"c{i}", "input": {"n": i}}).encode()
        expected.append((f"c{i}", {"n": i}, text.count(b"\n") + 1))
        text += line + (b"\r\n" if i % 7 == 0 else b"\n")
    path = tmp_path / "cases.jsonl"
    path.write_bytes(text.rstrip(b"\n"))
    dataset = load_dataset(path)
    assert [(c.id, c.input, c.line) for c in dataset.cases] == expected
    assert [(c.id, c.input, c.line) for c in reversed(dataset.cases)] == expected[::-1]
    assert dataset.digest == hashlib.sha256(path.read_bytes()).hexdigest()
    # A byte that is not UTF-8 in case c400 is named by its line and its offset in the file.
    at = text.index(b'"c400"') + 2
    path.write_bytes(text[:at] + b"\xff" + text[at + 1 :])
    line = expected[400][2]
    assert error_of(path) == f"{path}, line {line}: not UTF-8 text (byte {at})"
