"""Without Ray installed, choosing the ray engine is refused in one sentence naming the extra,
before anything is written; the local engine runs as ever.

Ray is installed here (the dev extra), so the CLI runs behind an import hook that makes
``import ray`` fail as it does where the package is missing.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.support import Result, copy_example

WITHOUT_RAY = """
import sys
from importlib.abc import MetaPathFinder


class NoRay(MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "ray" or name.startswith("ray."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, NoRay())
from oloproof.cli.main import main

sys.argv[0] = "oloproof"
main()
"""

SENTENCE = "the ray engine needs Ray, which is not installed: pip install 'oloproof[ray]'"


def _without_ray(*args: str, cwd: Path) -> Result:
    proc = subprocess.run(
        [sys.executable, "-c", WITHOUT_RAY, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return Result(proc.returncode, proc.stdout, proc.stderr)


def test_the_hook_hides_ray(tmp_path: Path) -> None:
    probe = WITHOUT_RAY.replace("from oloproof.cli.main import main", "import ray  # noqa")
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert proc.returncode == 1
    assert "ModuleNotFoundError: No module named 'ray'" in proc.stderr


def test_engine_ray_in_the_config_names_the_extra(tmp_path: Path) -> None:
    root = copy_example("support_rag", tmp_path)
    config = root / "oloproof.yaml"
    config.write_text(config.read_text(encoding="utf-8") + "engine: ray\n", encoding="utf-8")
    done = _without_ray("run", cwd=root)
    assert done.code == 2
    assert done.out == ""
    lines = done.err.splitlines()
    assert len(lines) == 1, done.err
    assert lines[0].startswith("error: ") and lines[0].endswith(SENTENCE), done.err
    assert "oloproof.yaml" in lines[0]  # it says where the engine was chosen
    assert not (root / ".oloproof").exists()  # nothing was written


def test_engine_option_names_the_extra_and_local_still_runs(tmp_path: Path) -> None:
    root = copy_example("support_rag", tmp_path)
    refused = _without_ray("run", "--engine", "ray", cwd=root)
    assert refused.code == 2
    assert len(refused.err.splitlines()) == 1 and SENTENCE in refused.err, refused.err
    on_address = _without_ray("run", "--engine", "127.0.0.1:6379", cwd=root)
    assert on_address.code == 2 and SENTENCE in on_address.err, on_address.err
    assert not (root / ".oloproof").exists()
    done = _without_ray("run", "--engine", "local", "--json", cwd=root)
    assert done.code == 3, done.err  # support_rag's gate fails, as it does with Ray installed
    assert json.loads(done.out)["run_id"].startswith("run_")


def test_an_engine_chosen_on_the_command_line_is_blamed_on_the_option(tmp_path: Path) -> None:
    # The error named "oloproof.yaml, line 2", a line that says nothing of Ray.
    root = copy_example("support_rag", tmp_path)
    for engine in ("ray", "127.0.0.1:6379"):
        refused = _without_ray("run", "--engine", engine, cwd=root)
        assert (refused.code, refused.err) == (2, f"error: --engine: {SENTENCE}\n")
    assert not (root / ".oloproof").exists()
