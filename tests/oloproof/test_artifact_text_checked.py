"""Every text field of every artifact type refuses a lone surrogate (which no ledger can store)
naming the field, in the words the run prints; text outside the ASCII range is kept as given."""

from __future__ import annotations

from typing import Any

import pytest

from oloproof.errors import ArtifactError
from oloproof.sdk import ARTIFACT_MODELS, validate_artifact

BAD = "a\ud800b"
WRONG = "the text holds a lone surrogate '\\ud800' (at character 1)"

CALL = {"provider": "openai", "model": "m", "request_key": "k"}
CASES: list[tuple[str, dict[str, Any], str]] = [
    ("retrieval/v1", {"query": BAD}, "query"),
    ("retrieval/v1", {"candidates": [{"doc_id": BAD}]}, "candidates.0.doc_id"),
    ("retrieval/v1", {"candidates": [{"doc_id": "d", "chunk_id": BAD}]}, "candidates.0.chunk_id"),
    ("retrieval/v1", {"candidates": [{"doc_id": "d", "text": BAD}]}, "candidates.0.text"),
    ("context/v1", {"items": [{"doc_id": BAD}]}, "items.0.doc_id"),
    ("context/v1", {"items": [{"doc_id": "d", "text": BAD}]}, "items.0.text"),
    ("context/v1", {"dropped": [{"doc_id": BAD, "reason": "r"}]}, "dropped.0.doc_id"),
    ("context/v1", {"items": [{"doc_id": "d", "chunk_id": BAD}]}, "items.0.chunk_id"),
    ("context/v1", {"dropped": [{"doc_id": "d", "reason": BAD}]}, "dropped.0.reason"),
    (
        "context/v1",
        {"dropped": [{"doc_id": "d", "chunk_id": BAD, "reason": "r"}]},
        "dropped.0.chunk_id",
    ),
    ("citations/v1", {"ids": ["ok", BAD]}, "ids.1"),
    *(
        ("model_call/v1", {**CALL, field: BAD}, field)
        for field in (
            "provider",
            "model",
            "request_key",
            "reply_id",
            "reply_model",
            "system_fingerprint",
            "finish_reason",
        )
    ),
]


@pytest.mark.parametrize(("kind", "value", "where"), CASES)
def test_a_lone_surrogate_is_refused_naming_its_field(
    kind: str, value: dict[str, Any], where: str
) -> None:
    with pytest.raises(ArtifactError) as refused:
        validate_artifact(kind, value)
    assert str(refused.value).startswith(f"malformed {kind} artifact: {where}: {WRONG}, ")


def test_every_text_field_is_covered() -> None:
    # A text field added to an artifact type without a case above is a gap in this test.
    named = {(kind, where.rsplit(".", 1)[-1]) for kind, _, where in CASES}
    for kind, model in ARTIFACT_MODELS.items():
        for field in _text_fields(model):
            assert any(k == kind and f in (field, "1") for k, f in named), (kind, field)


def _text_fields(model: Any) -> set[str]:
    found = set()
    for name, info in model.model_fields.items():
        shown = str(info.annotation)
        if "str" in shown:
            found.add(name)
        for inner in getattr(info.annotation, "__args__", ()):
            if hasattr(inner, "model_fields"):
                found |= _text_fields(inner)
            for deeper in getattr(inner, "__args__", ()):
                if hasattr(deeper, "model_fields"):
                    found |= _text_fields(deeper)
    return found


def test_text_beyond_ascii_is_kept() -> None:
    stored = validate_artifact("retrieval/v1", {"candidates": [{"doc_id": "d", "text": "wörd 🙂"}]})
    assert stored["candidates"][0]["text"] == "wörd 🙂"
