"""Projects and viewers shared by the viewer's tests (made once per test process)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.view.support import (
    OddIdsProject,
    SupportProject,
    make_hostile,
    make_odd_ids,
    make_support,
    serving,
)


@pytest.fixture(scope="session")
def support_project(tmp_path_factory: pytest.TempPathFactory) -> SupportProject:
    return make_support(tmp_path_factory.mktemp("support"))


@pytest.fixture(scope="session")
def support_url(support_project: SupportProject) -> Iterator[str]:
    with serving(support_project.root) as url:
        yield url


@pytest.fixture(scope="session")
def hostile_project(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    return make_hostile(tmp_path_factory.mktemp("hostile"))


@pytest.fixture(scope="session")
def odd_ids_project(tmp_path_factory: pytest.TempPathFactory) -> OddIdsProject:
    return make_odd_ids(tmp_path_factory.mktemp("odd"))


SCREENSHOTS = Path(__file__).resolve().parents[2] / ".pytest_cache" / "screenshots"


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> object:
    # A browser test that fails leaves a screenshot of its page, named in its report.
    report = yield
    page = getattr(item, "funcargs", {}).get("page")
    if report.when == "call" and report.failed and page is not None:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        shot = SCREENSHOTS / f"{item.name}.png"
        page.screenshot(path=str(shot), full_page=True)
        report.sections.append(("screenshot", f"the page when it failed: {shot}"))
    return report
