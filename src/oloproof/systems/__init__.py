"""System adapters: a Python callable, an HTTP endpoint, a staged RAG class, or a model."""

from __future__ import annotations

from pathlib import Path

from oloproof.config import SystemConfig
from oloproof.systems.base import System


def build_system(
    config: SystemConfig, *, base_dir: Path, where: str, concurrency: int, construct: bool = True
) -> System:
    """The adapter for ``config``'s one system kind.

    Without ``construct``, a staged system's class is not instantiated: the adapter can say
    its identity and assemble labels, not execute (a Ray run builds it on every replica).
    """
    if config.callable is not None:
        from oloproof.systems.callable import CallableSystem

        return CallableSystem(
            name=config.name,
            version=config.version,
            reference=config.callable,
            base_dir=base_dir,
            where=where,
        )
    if config.http is not None:
        from oloproof.systems.http import HttpSystemAdapter

        return HttpSystemAdapter(
            name=config.name,
            version=config.version,
            settings=config.http,
            where=where,
            concurrency=concurrency,
        )
    if config.model is not None:
        from oloproof.systems.model import ModelSystem

        return ModelSystem(
            name=config.name,
            version=config.version,
            settings=config.model,
            base_dir=base_dir,
            where=where,
        )
    assert config.rag is not None  # the model allows exactly one kind
    from oloproof.systems.rag import RagSystem

    return RagSystem(
        name=config.name,
        version=config.version,
        settings=config.rag,
        base_dir=base_dir,
        where=where,
        construct=construct,
    )
