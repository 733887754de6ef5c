"""The public door: every name in ``oloproof.__all__`` resolves, and the list is sorted."""

from __future__ import annotations

import subprocess
import sys

import ledger
import oloproof


def test_all_is_sorted_and_every_name_resolves() -> None:
    assert oloproof.__all__ == sorted(oloproof.__all__)
    for name in oloproof.__all__:
        assert getattr(oloproof, name) is not None, name
    assert ledger.__all__ == sorted(ledger.__all__)
    for name in ledger.__all__:
        assert getattr(ledger, name) is not None, name


def test_importing_the_cli_loads_no_heavy_module() -> None:
    probe = (
        "import sys, oloproof.cli.main as m; m._register(); "
        "print(sorted(n for n in ('scipy', 'numpy', 'httpx', 'pydantic', 'jsonschema') "
        "if n in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
