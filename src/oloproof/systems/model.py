"""A system that is a prompt template run over the cases by a model (``system: model:``).

For each case the prompt's ``{{ key }}`` placeholders are filled from the case input (dotted
keys reach nested values; a value that is not text goes in as JSON; an inserted value is never
read again as a placeholder), ``{{ context }}`` with the passages of ``context_field`` (per
case) or ``context_file`` (the same for every case), each as ``<passage id="...">`` text. The
request goes through the judges' providers (``oloproof.models.ModelClient``). The output is the
reply's text, or with ``output: json`` the JSON object it must be. Each case records its call as
``model_call/v1`` (tokens, cost, ids, the request's key) and, with passages, ``context/v1``.

Identity: kind, name, version, provider, model, base URL, server, API version, the prompt's and
system prompt's text, the passages of ``context_file``, ``context_field``, where the
instructions go, temperature, the token limit and its field, ``extra_body`` and ``output``:
everything the request is made of besides the case input; and how replies are read
(``oloproof.models.REPLIES``). So the execution cache (system
identity and input) is a cache by the exact request. A case whose input lacks a key the prompt
uses, a failed call (a reply the provider cannot read, one holding half a character included),
a reply that is not the model's whole answer (cut at the token limit, refused, a tool call,
several choices), or (``output: json``) a reply that is not an object the ledger records as it
reads (``NaN``, an integer past 2**64, a key given twice, nesting past ``MAX_NESTING``, a lone
surrogate escape) is errored.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

from ledger import CodecError, encode
from oloproof import strictjson
from oloproof.dataset import MAX_NESTING, Case, nesting
from oloproof.errors import ConfigError
from oloproof.jsonkeys import DuplicateKey
from oloproof.judge_config import ModelSystemSettings
from oloproof.providers import lone_surrogate_in
from oloproof.systems.base import ExecContext, Execution
from oloproof.yamlfile import read_file

_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_.]*)\s*\}\}")


class ModelSystemError(RuntimeError):
    """One case could not be put to the model, or its reply is not what the output needs."""


class ModelSystem:
    """Renders the prompt for each case, asks the model, records the call."""

    kind = "model"
    # The identity is the exact request (model, prompt, parameters): the same request asked
    # again is reused, as the guide of model systems promises.
    reuses_executions = True

    def __init__(
        self,
        *,
        name: str,
        version: str,
        settings: ModelSystemSettings,
        base_dir: Path,
        where: str,
    ) -> None:
        from oloproof import models
        from oloproof.providers.anthropic_messages import ANTHROPIC_VERSION

        self._settings = settings
        self._prompt = settings.prompt or _read_text(base_dir, settings.prompt_file, where)
        _check_placeholders(self._prompt, settings, where)
        self._keys = [m[1] for m in _PLACEHOLDER.finditer(self._prompt)]
        uses_context = "context" in self._keys
        given_context = settings.context_field is not None or settings.context_file is not None
        if uses_context != given_context:
            raise ConfigError(
                f"{where}: system.model: the prompt uses {{{{ context }}}} without a "
                "context_field or context_file"
                if uses_context
                else f"{where}: system.model: passages are given, but the prompt never uses "
                "{{ context }}"
            )
        self._shared = (
            _read_passages(base_dir, settings.context_file, where)
            if settings.context_file
            else None
        )
        self._client = models.ModelClient(settings)
        self._identity: dict[str, Any] = {
            "kind": self.kind,
            "name": name,
            "version": version,
            "provider": settings.provider,
            "model": settings.model,
            "base_url": settings.resolved_base_url,
            "server": settings.server,
            "api_version": ANTHROPIC_VERSION if settings.provider == "anthropic" else None,
            "prompt_sha256": hashlib.sha256(self._prompt.encode()).hexdigest(),
            "system_prompt": settings.system_prompt,
            "context_field": settings.context_field,
            "context": self._shared,
            "instructions": settings.resolved_instructions,
            "temperature": settings.temperature,
            "max_tokens": settings.max_tokens,
            "max_tokens_field": settings.max_tokens_field,
            "extra_body": dict(settings.extra_body),
            "output": settings.output,
            "replies": models.REPLIES,
        }

    def identity(self) -> dict[str, Any]:
        return self._identity

    def fingerprints(self) -> dict[str, dict[str, Any]]:
        """No project code runs in a model system: its identity is the request itself."""
        return {}

    async def execute(self, case: Case, ctx: ExecContext) -> Execution:
        passages = self._passages(case)
        prompt = self._render(case, passages)
        reply = await self._client.acomplete(prompt, system=self._settings.system_prompt or "")
        artifacts: dict[str, list[dict[str, Any]]] = {"model_call/v1": [reply.call]}
        if passages is not None:
            artifacts["context/v1"] = [{"items": passages, "source": "retrieval"}]
        if self._settings.output == "text":
            return Execution(output=reply.text, artifacts=artifacts)
        return Execution(output=_json_output(reply.text, case.id), artifacts=artifacts)

    async def aclose(self) -> None:
        await self._client.provider.aclose()

    # ------------------------------------------------------------------ the prompt

    def _passages(self, case: Case) -> list[dict[str, Any]] | None:
        if self._shared is not None:
            return self._shared
        field = self._settings.context_field
        if field is None:
            return None
        value = _lookup(case.input, field)
        if not isinstance(value, list):
            raise ModelSystemError(
                f"case {case.id!r}: context_field {field!r} is not a list of passages"
            )
        return [_passage(item, n, f"case {case.id!r}: {field}") for n, item in enumerate(value, 1)]

    def _render(self, case: Case, passages: list[dict[str, Any]] | None) -> str:
        def fill(match: re.Match[str]) -> str:
            key = match[1]
            if key == "context" and passages is not None:
                return "\n\n".join(
                    f'<passage id="{p["doc_id"]}">\n{p.get("text", "")}\n</passage>'
                    for p in passages
                )
            value = _lookup(case.input, key)
            if value is _ABSENT:
                raise ModelSystemError(
                    f"case {case.id!r}: the prompt uses {{{{ {key} }}}}, and the case input "
                    f"has no {key!r}"
                )
            return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)

        return _PLACEHOLDER.sub(fill, self._prompt)


def _json_output(text: str, case_id: str) -> dict[str, Any]:
    """The reply as the JSON object ``output: json`` needs, one the ledger records as it reads;
    ``ModelSystemError`` (the case errored: the model's doing, not the project's) otherwise."""
    try:
        output = strictjson.loads(text)
    except DuplicateKey as exc:
        raise ModelSystemError(f"case {case_id!r}: output: json, and in the reply {exc}") from None
    except strictjson.Unrecordable as exc:
        raise ModelSystemError(
            f"case {case_id!r}: output: json, and the reply holds JSON Oloproof cannot record "
            f"({exc})"
        ) from None
    except (ValueError, RecursionError):  # not JSON, or nested too deep to read
        output = None
    if not isinstance(output, dict):
        raise ModelSystemError(
            f"case {case_id!r}: output: json, and the reply is not a JSON object "
            f"(it begins {json.dumps(text[:60])})"
        )
    if nesting(output) > MAX_NESTING:
        raise ModelSystemError(
            f"case {case_id!r}: output: json, and the reply's JSON is nested deeper than "
            f"{MAX_NESTING} levels"
        )
    if lone_surrogate_in(output):
        raise ModelSystemError(
            f"case {case_id!r}: output: json, and the reply's JSON holds a lone surrogate escape "
            "(\\uD800-\\uDFFF without its pair), which is not text"
        )
    return output


_ABSENT = object()


def _lookup(data: Any, dotted: str) -> Any:
    for part in dotted.split("."):
        if not isinstance(data, dict) or part not in data:
            return _ABSENT
        data = data[part]
    return data


def _passage(item: Any, position: int, where: str) -> dict[str, Any]:
    if isinstance(item, str):
        return {"doc_id": f"p{position}", "position": position, "text": item}
    if isinstance(item, dict) and isinstance(item.get("doc_id"), str) and item["doc_id"]:
        text = item.get("text")
        if text is not None and not isinstance(text, str):
            raise ModelSystemError(f"{where}: passage {position}: text is not a string")
        passage = {"doc_id": item["doc_id"], "position": position}
        return passage if text is None else {**passage, "text": text}
    raise ModelSystemError(f"{where}: passage {position} is neither text nor {{doc_id, text}}")


def _read_text(base_dir: Path, name: str | None, where: str) -> str:
    path = base_dir / str(name)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{where}: system.model.prompt_file {path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(
            f"{where}: system.model.prompt_file {path}: cannot read it as UTF-8 text ({exc})"
        ) from None
    if not text.strip():
        raise ConfigError(f"{where}: system.model.prompt_file {path} is empty")
    return text


def _check_placeholders(prompt: str, settings: ModelSystemSettings, where: str) -> None:
    """Refuse a ``{{`` that starts no placeholder (``{{ q `` unclosed, ``{{ a-b }}``): it would
    be sent to the model as it is written, a question without its value, on every case."""
    rest = _PLACEHOLDER.sub("", prompt)
    at = rest.find("{{")
    if at < 0:
        return
    key = "prompt" if settings.prompt else f"prompt_file {settings.prompt_file}"
    near = rest[at : at + 30].split("\n", 1)[0]
    raise ConfigError(
        f"{where}: system.model.{key}: {near!r} starts no placeholder, and would be sent to the "
        "model as it is written; a placeholder is {{ key }}, the key made of letters, digits, "
        "_ and dots (a key of the case input, or context)"
    )


def _read_passages(base_dir: Path, name: str, where: str) -> list[dict[str, Any]]:
    path = base_dir / name
    said = f"{where}: system.model.context_file {path}"
    raw = read_file(path, what="a context file")  # no pipe, device or giant file
    try:
        data = strictjson.loads(raw.decode("utf-8"))
        encode(data)  # recorded in the system's identity: what it cannot hold is refused here
    except (UnicodeDecodeError, ValueError, CodecError) as exc:
        raise ConfigError(
            f"{said}: not a JSON list of passages the run can record ({exc})"
        ) from None
    except RecursionError:  # Python's parser recurses once per level of nesting
        raise ConfigError(f"{said}: nested too deeply to read") from None
    if not isinstance(data, list):
        raise ConfigError(f"{where}: system.model.context_file {path}: not a JSON list")
    try:
        return [_passage(item, n, str(path)) for n, item in enumerate(data, 1)]
    except ModelSystemError as exc:
        raise ConfigError(f"{where}: system.model.context_file: {exc}") from None
