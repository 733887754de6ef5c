"""Load and validate ``cases.jsonl``: one case per line, ``{id, input, expected, metadata}``.

Every error names the file, the line and the field. The whole file is checked before anything
runs, so a bad dataset never leaves a half-run behind.
"""

from __future__ import annotations

import hashlib
import json
import zlib
from array import array
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Final

from ledger import CodecError, encode, in_stored_order
from oloproof import redaction, strictjson
from oloproof.callargs import path as path_argument
from oloproof.errors import DatasetError
from oloproof.filekinds import lookup_fault
from oloproof.idtext import id_problem, same_text
from oloproof.jsonkeys import DuplicateKey, first_repeat
from oloproof.lazyseq import LazySequence
from oloproof.suggest import did_you_mean

_KEYS = frozenset({"id", "input", "expected", "metadata"})
# The keys an entry of expected.relevant / expected.gold_context may have (what the retrieval
# evaluators and the gold-context diagnosis read), and those it must have.
_ENTRY_KEYS = {
    "relevant": ("doc_id", "chunk_id", "grade"),
    "gold_context": ("doc_id", "chunk_id", "text"),
}
_REQUIRED = {"relevant": ("doc_id",), "gold_context": ("doc_id", "text")}

# Far beyond any grading scale (qrels-to-cases refuses the same): nDCG adds grades up, and
# grades near the largest float would add up to infinity.
GRADE_LIMIT: Final = 1_000_000

MAX_NESTING = 100
"""How deep a case's input, expected and metadata may nest (and a system's output): well inside
what the ledger records (400 levels, events and their wrappers included)."""


@dataclass(frozen=True)
class Case:
    """One case of the dataset."""

    id: str
    input: dict[str, Any]
    expected: dict[str, Any]
    metadata: dict[str, Any]
    line: int = 0


@dataclass(frozen=True)
class Dataset:
    """The cases of one file, in file order, and the SHA-256 of the file's bytes."""

    path: Path
    cases: Cases
    digest: str
    # Every top-level key of any case's metadata (what a `metadata.KEY` slice can read).
    metadata_keys: frozenset[str] = frozenset()

    @property
    def count(self) -> int:
        return len(self.cases)


@dataclass(frozen=True)
class RecordedDataset:
    """A cases file as a run recorded it: where it was, the SHA-256 of its bytes and its number
    of cases then. What a plan that re-executes that run's cases has in place of the file,
    which it does not read (its cases are the run's own, from the ledger)."""

    path: Path
    digest: str
    count: int


CaseCheck = Callable[[Case], str | None]
"""What the planned run needs of each case beyond its shape (an evaluator's expected text):
the problem, worded to follow ``FILE, line N: ``, or None."""


def load_dataset(path: str | Path, check: CaseCheck | None = None) -> Dataset:
    """Read and check every line of ``path`` (each case with ``check`` too, when given); raise
    ``DatasetError`` at the first bad one.

    The file is read a line at a time (hashed, checked and compressed as it goes), so loading
    it never holds the whole file.
    """
    path = path_argument("path", path, "the path of a cases file", where="load_dataset()")
    fault = lookup_fault(path)  # else Path.exists below raised a bare OSError
    if fault is not None:
        raise DatasetError(f"{path}: cannot read it ({fault})")
    if path.exists() and not path.is_file():  # a folder, or a device or pipe that never ends
        raise DatasetError(f"{path}: not a file of cases")
    try:
        with path.open("rb") as file:
            return _load(path, file, check)
    except FileNotFoundError:
        raise DatasetError(f"{path}: no such file") from None
    except OSError as exc:
        raise DatasetError(f"{path}: cannot read it ({exc.strerror})") from None


def _load(path: Path, file: BinaryIO, check: CaseCheck | None) -> Dataset:
    digest = hashlib.sha256()
    blocks = _Blocks()
    # Each case id's hash, not the ids themselves: a dict of a million ids would be the largest
    # thing a run holds. Equal hashes are rare, and are looked at exactly (``_first_duplicate``).
    hashes = array("q")
    metadata_keys: set[str] = set()
    start = 0
    # Lines end at "\n" alone, as JSON Lines says (a binary file splits at nothing else): a
    # U+2028 inside a string is not a line break.
    for number, raw in enumerate(file, start=1):
        digest.update(raw)
        end = start + len(raw) - (1 if raw.endswith(b"\n") else 0)
        try:
            line = raw[: end - start].decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DatasetError(
                f"{path}, line {number}: not UTF-8 text (byte {start + exc.start})"
            ) from None
        if line.strip():
            try:
                case = _parse_line(path, number, line)
                problem = _holds_secret(case.id) or (check(case) if check is not None else None)
                if problem is not None:
                    raise DatasetError(f"{path}, line {number}: {problem}")
            except DatasetError:
                # A repeated id on an earlier line is the first thing wrong with the file.
                _first_duplicate(path, blocks.cases(path), hashes)
                raise
            metadata_keys.update(case.metadata)
            hashes.append(hash(same_text(case.id)))
            blocks.add(number, raw)
        else:
            blocks.skip(raw)
        start += len(raw)
    if not hashes:
        raise DatasetError(f"{path}: no cases (the file is empty)")
    cases = blocks.cases(path)
    _first_duplicate(path, cases, hashes)
    return Dataset(path, cases, digest.hexdigest(), frozenset(metadata_keys))


def _holds_secret(case_id: str) -> str | None:
    """Why ``case_id`` cannot be stored, when it holds a secret the run keeps out (registered
    before the cases are read): redacted, it could be another case's id. A command that only
    reads a run (an export listing its unrun cases) keeps its secrets out of what it shows."""
    if not redaction.holds_secret(case_id, shown_only_too=False):
        return None
    return (
        "the case id holds the value of a secret this run keeps out (a variable listed under "
        "secrets:, or one named like a credential); stored, it would read [redacted] and could "
        "not be told from other ids: give the case an id without it"
    )


class _Blocks:
    """The file's case lines, compressed ``_BLOCK_CASES`` cases at a time as they are read:
    each block holds the lines from its first case's to its last one's, blank ones included."""

    def __init__(self) -> None:
        self.compressed: list[bytes] = []
        self.first_lines = array("Q")  # the line number of each block's first case
        self.offsets = array("Q")  # where each case's line starts in its block
        self._open = bytearray()  # the block being filled, from its first case's line on

    def add(self, number: int, raw: bytes) -> None:
        """The case on line ``number``, whose bytes are ``raw``."""
        if not self._open:
            self.first_lines.append(number)
        self.offsets.append(len(self._open))
        self._open += raw
        if len(self.offsets) % _BLOCK_CASES == 0:
            self._close()

    def skip(self, raw: bytes) -> None:
        """A blank line: inside a block it stays, so offsets within the block still hold."""
        if self._open:
            self._open += raw

    def _close(self) -> None:
        self.compressed.append(zlib.compress(bytes(self._open), 1))
        self._open = bytearray()

    def cases(self, path: Path) -> Cases:
        """The cases read so far."""
        blocks = list(self.compressed)
        if self._open:
            blocks.append(zlib.compress(bytes(self._open), 1))
        return Cases(path, blocks, self.first_lines, self.offsets)


def _first_duplicate(path: Path, cases: Cases, hashes: array[int]) -> None:
    """Raise ``DatasetError`` at the first case whose id an earlier case has, if any."""
    import numpy as np

    ordered = np.sort(np.frombuffer(hashes, dtype=np.int64))
    if not bool((ordered[1:] == ordered[:-1]).any()):
        return
    # Each case's id and line, not the case: the cases up to the repeat are not held parsed.
    numbered = ((case.id, case.line) for case in cases)
    repeat = first_repeat(numbered, key=lambda id_line: same_text(id_line[0]))
    if repeat is None:
        return
    (earlier, line), (case_id, number) = repeat
    if earlier == case_id:
        raise DatasetError(
            f"{path}, line {number}: duplicate case id {case_id!r} (first on line {line})"
        )
    raise DatasetError(
        f"{path}, line {number}: case id {case_id!a} is the same text as "
        f"{earlier!a} on line {line}, written with other Unicode code points (they "
        "look alike wherever they are shown); write both the same way, or rename one"
    )


class Cases(LazySequence[Case]):
    """A checked file's cases, in file order, kept as the file's lines (compressed, a block of
    them at a time) and where each case's line starts in its block.

    Parsed, a small case takes about 1.2 KB of Python objects; its line, about a tenth of that,
    and compressed a few times less again: with its offset, a case held costs a few tens of
    bytes. Each case is parsed again when it is read, which cannot fail: the file was checked
    whole when it was loaded. A case's line number is its block's first case's plus the line
    breaks before it in the block. Runs read cases in file order, so a block is decompressed,
    and its line breaks counted, once for all its cases.
    """

    def __init__(
        self, path: Path, blocks: list[bytes], first_lines: array[int], offsets: array[int]
    ) -> None:
        self._path = path
        self._blocks = blocks  # each _BLOCK_CASES cases' lines, compressed
        self._first_lines = first_lines  # each block's first case's line number
        self._offsets = offsets  # where each case's line starts in its block
        self._open: tuple[int, bytes] = (-1, b"")  # the block read last, decompressed
        self._counted = (-1, 0, 0)  # block, offset, line number there: the last case read

    def __len__(self) -> int:
        return len(self._offsets)

    def _item(self, i: int) -> Case:
        block = i // _BLOCK_CASES
        opened, data = self._open
        if opened != block:
            data = zlib.decompress(self._blocks[block])
            self._open = (block, data)
        start = self._offsets[i]
        end = data.find(b"\n", start)
        line = data[start:] if end < 0 else data[start:end]
        return _checked_line(self._line_number(block, data, start), line)

    def _line_number(self, block: int, data: bytes, start: int) -> int:
        counted, at, number = self._counted
        if counted != block or start < at:
            at, number = 0, self._first_lines[block]
        number += data.count(b"\n", at, start)
        self._counted = (block, start, number)
        return number


def _checked_line(number: int, line: bytes) -> Case:
    """A case from a line ``_parse_line`` accepted: its checks only refuse, they change no
    value, so the plain parse gives the same case at a fraction of the cost.

    Its maps are put in the order the ledger stores them: an execution (and a judgment) is
    keyed on the case as stored, so code handed the file's order (a prompt built from
    ``case.items()``) would be served, from the cache or by a case that repeats the input, an
    answer made from another order."""
    data = json.loads(line.decode("utf-8"))
    return Case(
        data["id"],
        in_stored_order(data["input"]),
        in_stored_order(data.get("expected", {})),
        in_stored_order(data.get("metadata", {})),
        number,
    )


_BLOCK_CASES: Final = 256  # lines compressed together: big enough to compress, quick to open


def _parse_line(path: Path, number: int, line: str) -> Case:
    where = f"{path}, line {number}"
    try:
        data = strictjson.loads(line)
    except json.JSONDecodeError as exc:
        raise DatasetError(f"{where}: {strictjson.syntax_problem(exc)}") from None
    except (strictjson.Unrecordable, DuplicateKey) as exc:
        raise DatasetError(f"{where}: {exc}") from None
    except RecursionError:
        raise DatasetError(f"{where}: nested deeper than {_NESTING_LIMIT}") from None
    if not isinstance(data, dict):
        raise DatasetError(f"{where}: a case must be a JSON object, found {_kind(data)}")
    unknown = sorted(set(data) - _KEYS)
    if unknown:
        raise DatasetError(
            f"{where}: unknown field {unknown[0]!r}{did_you_mean(unknown[0], _KEYS)} "
            "(a case has id, input, expected, metadata)"
        )
    case_id = data.get("id")
    if not isinstance(case_id, str) or not case_id:
        raise DatasetError(f"{where}: field 'id' must be a non-empty string")
    unseen = id_problem(case_id)
    if unseen is not None:
        raise DatasetError(f"{where}: field 'id' {unseen}")
    if "input" not in data:
        raise DatasetError(f"{where}: case {case_id!r} has no 'input'")
    fields: dict[str, dict[str, Any]] = {}
    for name in ("input", "expected", "metadata"):
        value = data.get(name, {})
        if not isinstance(value, dict):
            raise DatasetError(
                f"{where}: field {name!r} of case {case_id!r} must be a JSON object, "
                f"found {_kind(value)}"
            )
        fields[name] = value
    _check_expected(where, case_id, fields["expected"])
    if line.count("[") + line.count("{") > MAX_NESTING:  # only then can a field nest too deep
        for name, value in fields.items():
            if nesting(value) > MAX_NESTING:
                raise DatasetError(
                    f"{where}: field {name!r} of case {case_id!r} is nested deeper than "
                    f"{_NESTING_LIMIT}"
                )
    if strictjson.SURROGATE_ESCAPE.search(line):
        _check_text(where, case_id, fields)
    return Case(case_id, fields["input"], fields["expected"], fields["metadata"], number)


_NESTING_LIMIT = f"{MAX_NESTING} levels (the most a case may nest)"


def own_copy(value: Any) -> Any:
    """A copy of a case's JSON data (its input) for one call of user code: what the call
    changes in it stays out of the case, which the run records and judges, and out of what a
    later stage is handed. Text and numbers cannot change, so only maps and lists are copied."""
    if type(value) is dict:
        return {key: own_copy(item) for key, item in value.items()}
    if type(value) is list:
        return [own_copy(item) for item in value]
    return value


def nesting(value: Any, limit: int = MAX_NESTING) -> int:
    """How many containers deep ``value`` goes (a scalar: 0), counting up to ``limit + 1``."""
    depth, level = 0, [value]
    while depth <= limit:
        containers = [v for v in level if isinstance(v, dict | list)]
        if not containers:
            break
        depth += 1
        level = [c for v in containers for c in (v.values() if isinstance(v, dict) else v)]
    return depth


def _check_text(where: str, case_id: str, fields: dict[str, dict[str, Any]]) -> None:
    """Refuse a lone surrogate (a \\uD800-\\uDFFF escape without its pair) in the id or a field."""
    for name, value in {"id": case_id, **fields}.items():
        try:
            encode(value)
        except CodecError:
            owner = "" if name == "id" else f" of case {case_id!r}"
            raise DatasetError(
                f"{where}: field {name!r}{owner} holds a lone surrogate escape "
                "(\\uD800-\\uDFFF without its pair), which is not text"
            ) from None


def _check_expected(where: str, case_id: str, expected: dict[str, Any]) -> None:
    """The two lists of expected with fixed shapes: ``relevant`` and ``gold_context``.

    The rest of ``expected`` is free: each evaluator names the key it reads.
    """
    for name, keys in _ENTRY_KEYS.items():
        if name not in expected:
            continue
        entries = expected[name]
        if not isinstance(entries, list):
            raise DatasetError(f"{where}: expected.{name} of case {case_id!r} must be a list")
        for index, entry in enumerate(entries):
            field = f"expected.{name}[{index}]"
            if not isinstance(entry, dict):
                raise DatasetError(f"{where}: {field} of case {case_id!r} must be an object")
            unknown = sorted(set(entry) - set(keys))
            if unknown:
                raise DatasetError(
                    f"{where}: {field} of case {case_id!r} has an unknown key {unknown[0]!r} "
                    f"(an entry has {', '.join(keys)})"
                )
            _check_entry(f"{where}: {field}", case_id, entry, _REQUIRED[name])


def _check_entry(at: str, case_id: str, entry: dict[str, Any], required: tuple[str, ...]) -> None:
    for key in required:
        if not isinstance(entry.get(key), str) or not entry[key]:
            raise DatasetError(f"{at}.{key} of case {case_id!r} must be a non-empty string")
    # A gold passage replaces the retrieved context under diagnosis: one of whitespace alone
    # would hand the model nothing, and its failure would read as the model's.
    text = entry.get("text")
    if isinstance(text, str) and not text.strip():
        raise DatasetError(
            f"{at}.text of case {case_id!r} holds only whitespace; a gold passage is the text "
            "that would have answered the case, and the model is given it in place of the "
            "retrieved context"
        )
    chunk = entry.get("chunk_id")
    if chunk is not None and (not isinstance(chunk, str) or not chunk):
        raise DatasetError(f"{at}.chunk_id of case {case_id!r} must be a non-empty string or null")
    # Ids are matched exactly: "kb-11 " would match no retrieved passage, and its case would
    # read as one whose relevant passage was never retrieved.
    for key in ("doc_id", "chunk_id"):
        value = entry.get(key)
        if isinstance(value, str) and value.strip() != value:
            end = "start" if value.lstrip() != value else "end"
            raise DatasetError(
                f"{at}.{key} of case {case_id!r} is {value!r}, with whitespace at its {end}; "
                "ids are matched exactly, so it would match no retrieved passage"
            )
    grade = entry.get("grade", 1)
    if isinstance(grade, bool) or not isinstance(grade, int | float):
        raise DatasetError(f"{at}.grade of case {case_id!r} must be a number")
    if not -GRADE_LIMIT <= grade <= GRADE_LIMIT:
        raise DatasetError(
            f"{at}.grade of case {case_id!r} is {grade!r}, beyond ±{GRADE_LIMIT:,}, which no "
            "grade needs"
        )


def _kind(value: Any) -> str:
    # The user wrote the line as JSON: a list is named with JSON's word for it.
    return "an array" if isinstance(value, list) else strictjson.kind(value)


def dotted_key(value: Any, parts: Sequence[str]) -> str | None:
    """The key holding a dot that the path ``parts`` passes through ``value``, if any: ``a.b``
    of ``{"a.b": 1}`` for ``("a", "b")``, which reads the key ``b`` inside the key ``a``. A
    dotted path (``metadata.a.b``, ``expected_field: gold.answer``) reads its dots as nesting,
    so it cannot name such a key: its readers refuse it rather than read the value as missing."""
    for start, part in enumerate(parts):
        if not isinstance(value, Mapping):
            return None
        for end in range(start + 2, len(parts) + 1):
            joined = ".".join(parts[start:end])
            if joined in value:
                return joined
        value = value.get(part)
    return None


def dotted_refusal(holder: str, dotted: str, reader: str) -> str:
    """The sentence refusing a key holding a dot (``dotted_key``) that the dotted path of
    ``reader`` passes: ``holder`` says whose key it is (``case 'a' has the metadata key``)."""
    return (
        f"{holder} {dotted!r}, whose dot {reader} reads as a key inside a key, so it could not "
        "read the value there; rename the key without the dot"
    )


def lookalike_key(value: Any, parts: Sequence[str]) -> tuple[str, str] | None:
    """The first key on the path ``parts`` through ``value`` that is the path's part there
    written with other code points (``idtext.same_text``: an accent composed or not, a
    zero-width joiner), with that part: ``("café", "cafe\u0301")``. A path reads keys by their
    code points, so it would read the value under such a key as missing, though the two print
    alike: its readers refuse it, as they refuse a key holding a dot (``dotted_key``)."""
    for part in parts:
        if not isinstance(value, Mapping):
            return None
        # Two ASCII names are the same text only when they are the same name (nearly always).
        if not part.isascii() or not all(key.isascii() for key in value):
            same = same_text(part)
            for key in value:
                if key != part and same_text(key) == same:
                    return part, key
        value = value.get(part)
    return None


def lookalike_refusal(holder: str, found: tuple[str, str], reader: str) -> str:
    """The sentence refusing a key ``lookalike_key`` found: ``holder`` says whose key it is
    (``case 'a' has the metadata key``)."""
    part, key = found
    return (
        f"{holder} {key!a}, the same text as {part!a} that {reader} reads, written with other "
        "Unicode code points (they look alike wherever they are shown), so it would read no "
        "value there; write both the same way"
    )
