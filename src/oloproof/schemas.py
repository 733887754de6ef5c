"""JSON Schemas of the files users write, the artifacts systems record, and the body of each
event type in the ledger (``events/<type>.json``, from ``oloproof.bodies``).

``python -m oloproof.schemas DIR`` writes them; a test regenerates them and compares with the
checked-in ``schemas/``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel, TypeAdapter

from oloproof.bodies import BODIES
from oloproof.case_schema import CaseRecord, GoldPassage, RelevanceLabel
from oloproof.config import ComparePolicy, Policy, ProjectConfig
from oloproof.sdk import ARTIFACT_MODELS

MODELS: dict[str, type[BaseModel]] = {
    "config": ProjectConfig,
    "policy": Policy,
    "compare-policy": ComparePolicy,
    "case": CaseRecord,
    "relevance-label": RelevanceLabel,
    "gold-passage": GoldPassage,
    **{kind.replace("/", "-"): model for kind, model in ARTIFACT_MODELS.items()},
}


def generate() -> dict[str, dict[str, Any]]:
    """File name (without .json, relative to the folder) → schema."""
    schemas = {name: model.model_json_schema() for name, model in sorted(MODELS.items())}
    for kind, body in sorted(BODIES.items()):
        schema = TypeAdapter(body).json_schema()
        schemas[f"events/{kind}"] = {"title": f"{kind} event body", **schema}
    return schemas


def render(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def write(folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, schema in generate().items():
        path = folder / f"{name}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(render(schema), encoding="utf-8")
        written.append(path)
    return written


if __name__ == "__main__":
    for written_path in write(Path(sys.argv[1] if len(sys.argv) > 1 else "schemas")):
        sys.stdout.write(f"{written_path}\n")
