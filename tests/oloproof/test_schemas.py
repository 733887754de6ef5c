"""The checked-in JSON Schemas are exactly what the models generate."""

from __future__ import annotations

from pathlib import Path

from oloproof.schemas import generate, render

SCHEMAS = Path(__file__).resolve().parents[2] / "schemas"


def test_schemas_are_in_sync_with_the_models() -> None:
    generated = {f"{name}.json": render(schema) for name, schema in generate().items()}
    on_disk = {
        p.relative_to(SCHEMAS).as_posix(): p.read_text(encoding="utf-8")
        for p in SCHEMAS.rglob("*.json")
    }
    assert sorted(on_disk) == sorted(generated), "run: python -m oloproof.schemas schemas"
    for name, text in generated.items():
        assert on_disk[name] == text, f"{name} is stale; run: python -m oloproof.schemas schemas"


def test_the_config_schema_knows_every_evaluator_type() -> None:
    text = render(generate()["config"])
    for kind in ("contains", "hit_rate", "ndcg", "citation_validity", "groundedness_judge"):
        assert f'"{kind}"' in text
