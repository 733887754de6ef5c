"""Pages: a path and its query become a rendered page, for the server and the export alike.

Templates are jinja2 with autoescaping on for every page, so each string from the ledger (a
case's input, a system's output, a traceback) is shown as text, never read as markup. The only
markup that is not escaped is what this package builds itself (``svg``, ``linked``), and that
escapes every piece of text it includes.
"""

from __future__ import annotations

import json
import re
import traceback
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from markupsafe import Markup, escape

from ledger import LedgerError
from oloproof import display, report
from oloproof.call_totals import totals_text
from oloproof.errors import LedgerAccessError
from oloproof.flips import changed_cases_line
from oloproof.redaction import redact_text
from oloproof.relevance import described, relevant_units, unit_of
from oloproof.results import Interval
from oloproof.stats import CLOPPER_PEARSON
from oloproof.view import data, svg
from oloproof.view.links import Links

FLUSH = "\x00flush\x00"  # a template emits it where the page so far should go out at once
# The most characters of one value a page shows: a system's output of 10 MB would take the
# browser seconds to lay out, and nobody reads it there (`oloproof inspect` prints it whole).
SHOWN = 100_000
_LINKABLE = re.compile(r"sha256:[0-9a-f]{64}|run_[0-9A-HJKMNP-TV-Z]{26}")


class NotFound(Exception):
    """The page names nothing the ledger holds."""


def failure_text(exc: Exception) -> str:
    """What a page says when building it failed on ``exc``: a damaged ledger, or a bug."""
    if isinstance(exc, LedgerAccessError):  # a refusal that says itself what to do
        return f"This page cannot be shown: {exc}."
    if isinstance(exc, LedgerError):
        return (
            f"This page cannot be shown: {exc}. "
            "`oloproof verify` lists every problem the ledger has."
        )
    return f"This page cannot be shown: the viewer failed ({type(exc).__name__}: {exc})."


Builder = Callable[[data.Reader, list[str], Mapping[str, str]], dict[str, Any]]


@dataclass(frozen=True)
class Route:
    template: str
    build: Builder


def clipped(text: str) -> str:
    """``text``, or its first ``SHOWN`` characters and a line saying how many more there are.
    Redacted before it is cut: a secret declared after the run was stored whole, and a cut
    through it would leave a part that the redaction of the whole page cannot find."""
    text = redact_text(text)
    if len(text) <= SHOWN:
        return text
    more = len(text) - SHOWN
    return (
        f"{text[:SHOWN]}\n… {more:,} more characters not shown here "
        "(`oloproof inspect` prints its event whole)"
    )


def shown(text: str) -> str:
    """``text`` with each mark that reorders text (U+202E and its kin) written as its escape
    (``\\u202e``), as ``oloproof run`` writes an error and the Markdown summary any text: a
    system's output or error holding one would otherwise show what follows it on its line
    reversed, or reordered (``boom \\u202eexe.txt`` read as ``boom txt.exe``)."""
    return display.unreordered(text)


def _finalize(value: Any) -> Any:
    """Every value a template prints: text from the ledger is cut to ``SHOWN`` characters, and
    shown as it is (``shown``).

    Markup is this package's own (``svg``, ``linked`` of already clipped text, each of which
    shows its text so) and is left whole: cutting it could end it inside a tag.
    """
    if isinstance(value, str) and not isinstance(value, Markup):
        return shown(clipped(value))
    return value


def _environment() -> Environment:
    env = Environment(
        loader=PackageLoader("oloproof.view", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        undefined=StrictUndefined,
        finalize=_finalize,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.globals.update(
        flush=lambda: Markup(FLUSH),
        svg=svg,
        value=value_text,
        interval=interval_text,
        rule_interval=rule_interval_text,
        points=points_text,
        points_interval=points_interval_text,
        as_json=lambda v: clipped(json.dumps(v, indent=2, ensure_ascii=False, default=str)),
        preview=preview,
        artifact=data.last_artifact,
        ranked=ranked_items,
        relevance_note=relevance_note,
        citations=checked_citations,
        rule_thresholds=rule_thresholds,
        rule_threshold_text=rule_threshold_text,
        # A comparison rule's margin, in points as the policy gave it, as `compare` prints it.
        written=display.fmt_written,
        cost=display.fmt_cost,
        rule_note=data.rule_note,
        comparison_note=report.comparison_rule_note,
        # A comparison's planning lines and changed cases, in the words `compare` prints.
        planning_text=report.planning_text,
        rule_margins=report.rule_margins,
        # How a metric row's interval counts its missing pairs, as `compare` prints under it.
        counted_text=report.counted_text,
        changed_cases=changed_cases_line,
        # The line `oloproof compare` prints under a comparison's gate with nothing under it.
        comparison_evidence=report.comparison_evidence_line,
        # Why cases were not paired, in the lines `oloproof compare` prints.
        unpaired_lines=report.unpaired_lines,
        # The line `oloproof compare` prints when paired cases repeat an earlier pair.
        repeated_pairs=report.repeated_pairs_line,
        # The line `oloproof run` prints under a gate with nothing under it.
        evidence_line=report.evidence_line,
        # The line `oloproof run` prints for a gate that does not stand for the cases since.
        withdrawn_gate_line=report.withdrawn_gate_line,
        # Slice values and what slice rows leave out, in the words `run` and `compare` print.
        slice_text=report.slice_text,
        slices_unrun=report.slices_unrun_line,
        slices_left_out=report.left_out_of_slices,
        # What a run's cache counts leave out, in the words `run` prints.
        uncounted_text=report.uncounted_text,
        # What a judge's tokens and cost leave out, in the words `run` prints under them.
        usage_left_out=report.usage_left_out_text,
        # What the system's own model calls cost, in the words `run` prints.
        model_calls_text=totals_text,
        # How a metric's interval counts its missing cases, as `run` prints under the table.
        missing_lines=report.missing_metric_lines,
        # The line `run` prints under its metrics when cases repeat an earlier one.
        repeated_cases=report.repeated_cases_line,
        kinds=data.KINDS,
        # The report's own words for what errored, as `oloproof run` and `inspect` print them.
        errored_count=report.errored_count,
        errored_summary=report.errored_summary,
        repeats_errored_summary=report.repeats_errored_summary,
        observed_repeats=report.observed_repeats_text,
    )
    return env


_ENV: Environment | None = None


def environment() -> Environment:
    global _ENV
    if _ENV is None:
        _ENV = _environment()
    return _ENV


def warm_up() -> None:
    """Compile every template and load what reports need, before the first request."""
    env = environment()
    for name in env.list_templates(extensions=["html"]):
        env.get_template(name)
    data.warm_up()


# ------------------------------------------------------------------------------ formatting


def value_text(estimate: float | None, proportion: bool) -> str:
    if estimate is None:
        return "—"
    return display.fmt_percent(estimate) if proportion else display.fmt_mean(estimate)


def interval_text(lower: float | None, upper: float | None, proportion: bool) -> str:
    if lower is None or upper is None:
        return "—"
    iv = Interval(lower, upper, 0.0, "")
    return display.fmt_percent_interval(iv) if proportion else display.fmt_mean_interval(iv)


def rule_interval_text(detail: Mapping[str, Any]) -> str:
    """The interval a rule decided on, as the interval it is: a Clopper-Pearson one bounds a
    proportion (in percent), a betting one a mean (``0.702``), as ``run`` prints its metric.
    A decision recorded without its method was of a proportion, as the page wrote it."""
    return interval_text(detail["lower"], detail["upper"], _of_proportion(detail))


def _of_proportion(detail: Mapping[str, Any]) -> bool:
    return bool(detail.get("method", CLOPPER_PEARSON) == CLOPPER_PEARSON)


def rule_threshold_text(rule: Mapping[str, Any], detail: Mapping[str, Any]) -> str:
    """``min 30.0%``: a rule's thresholds in the units of the interval it decided on
    (``rule_interval_text``), as the policy wrote them: a proportion's ``min: 0.3`` beside
    ``[38.5%, 91.0%]`` read as 0.3%. Never rounded (``min 69.25%``), so each bound printed
    beside it is on the side of it the rule saw. A rule with both decides on both, and shows
    both (``min 50.0%, max 90.0%``)."""
    proportion = _of_proportion(detail)
    places, scale, unit = (1, 2, "%") if proportion else (3, 0, "")
    written = [
        f"{key} {display.fmt_written(float(rule[key]), places, scale)}{unit}"
        for key in ("min", "max")
        if rule.get(key) is not None
    ]
    return ", ".join(written) or "no threshold recorded"


def points_text(d: float | None) -> str:
    return "—" if d is None else display.fmt_points(d)


def points_interval_text(
    lower: float | None, upper: float | None, margins: Sequence[float] = ()
) -> str:
    """An interval in points; ``margins``: those of the rules on its metric, a comparison
    row's (``report.rule_margins``), each bound kept on its side of them as ``compare``
    prints it."""
    if lower is None or upper is None:
        return "—"
    return display.fmt_points_interval(Interval(lower, upper, 0.0, ""), margins)


def preview(value: Any, limit: int = 160) -> str:
    """``value`` on one line, cut at ``limit`` characters; redacted first, as ``clipped``."""
    text = redact_text(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def linked(text: str, links: Links) -> Markup:
    """``text`` escaped and ``shown``, with every address and run id in it made a link."""
    out: list[str] = []
    last = 0
    for found in _LINKABLE.finditer(text):
        out.append(str(escape(shown(text[last : found.start()]))))
        token = found.group(0)
        href = links.address(token) if token.startswith("sha256:") else links.run(token)
        out.append(f'<a href="{escape(href)}">{token}</a>')
        last = found.end()
    out.append(str(escape(shown(text[last:]))))
    return Markup("".join(out))


def rule_thresholds(rule: Mapping[str, Any]) -> list[float]:
    """A rule's ``min`` and ``max``, those it has: the lines its interval is read against."""
    return [float(rule[key]) for key in ("min", "max") if rule.get(key) is not None]


def ranked_items(
    artifacts: Mapping[str, list[Any]], expected: Mapping[str, Any], unit: str | None
) -> list[svg.Ranked]:
    """The recorded retrieval in rank order, each marked relevant / in context / dropped.

    A candidate is relevant exactly when the run's retrieval metrics count it so: its unit
    (``unit``, theirs) has a grade above 0 (``oloproof.relevance``). With ``unit`` None they
    read relevance in different units, and no candidate is marked either way.
    """
    retrieval = data.last_artifact(artifacts, "retrieval/v1")
    if retrieval is None:
        return []
    context = data.last_artifact(artifacts, "context/v1") or {}
    relevant = set() if unit is None else relevant_units(expected, unit)
    first: dict[Hashable, int] = {}
    items = {int(i.get("position", 0)): i for i in context.get("items") or []}
    dropped = {int(d.get("position", 0)): d for d in context.get("dropped") or []}
    ranked = []
    for n, candidate in enumerate(retrieval.get("candidates") or [], start=1):
        doc_id = str(candidate.get("doc_id"))
        chunk_id = candidate.get("chunk_id")
        key = None if unit is None else unit_of(candidate, unit)
        # The metrics count a unit retrieved again at its first position only.
        counted = first.setdefault(key, n) if key in relevant else None
        in_ctx = items.get(n)
        drop = dropped.get(n)
        ranked.append(
            svg.Ranked(
                position=n,
                doc_id=doc_id,
                chunk_id=None if chunk_id is None else str(chunk_id),
                score=candidate.get("score"),
                relevant=None if unit is None else counted is not None,
                counted_at=None if counted == n else counted,
                in_context=in_ctx is not None and str(in_ctx.get("doc_id")) == doc_id,
                dropped=None if drop is None else str(drop.get("reason")),
                tokens=None if in_ctx is None else in_ctx.get("tokens"),
            )
        )
    return ranked


def relevance_note(units: Mapping[str, str], unit: str | None) -> str:
    """What the stars of a retrieval mean, in the run's relevance unit."""
    if unit is None:
        return (
            "No passage is starred: the retrieval metrics read relevance in different units "
            f"({described(units)}), so whether a passage is relevant has no one answer."
        )
    if not units:
        return f"★ marks a passage the case labels relevant (a grade above 0, by {unit})."
    return f"★ marks a passage the retrieval metrics count as relevant (by {unit})."


def checked_citations(artifacts: Mapping[str, list[Any]]) -> list[tuple[str, bool]]:
    """Each cited id and whether it names a passage of the context the answer was given."""
    cited = data.last_artifact(artifacts, "citations/v1")
    if cited is None:
        return []
    context = data.last_artifact(artifacts, "context/v1") or {}
    present = {str(i.get("doc_id")) for i in context.get("items") or []}
    return [(str(c), str(c) in present) for c in cited.get("ids") or []]


# ---------------------------------------------------------------------------------- routes


def _int(query: Mapping[str, str], key: str) -> int:
    try:
        return max(1, int(query.get(key, "1")))
    except ValueError:
        return 1


def _runs(reader: data.Reader, _: list[str], q: Mapping[str, str]) -> dict[str, Any]:
    filters = {k: q.get(k) or None for k in ("system", "state", "gate")}
    page = data.runs(reader, page=_int(q, "page"), **filters)
    given = {k: v for k, v in filters.items() if v}
    return {
        "page": page,
        "filters": filters,
        "prev_query": {**given, "page": page.page - 1},
        "next_query": {**given, "page": page.page + 1},
    }


def _run(reader: data.Reader, parts: list[str], _: Mapping[str, str]) -> dict[str, Any]:
    return {"page": data.run_page(reader, parts[0])}


def _failures(reader: data.Reader, parts: list[str], q: Mapping[str, str]) -> dict[str, Any]:
    filters = {k: q.get(k) or None for k in ("criterion", "kind", "slice")}
    page = data.failures(
        reader,
        parts[0],
        criterion=filters["criterion"],
        kind=filters["kind"],
        slice_=filters["slice"],
        page=_int(q, "page"),
    )
    return {"page": page, "filters": filters}


def _case(reader: data.Reader, parts: list[str], _: Mapping[str, str]) -> dict[str, Any]:
    return {"page": data.case_page(reader, parts[0], parts[1])}


def _diagnosis(reader: data.Reader, parts: list[str], _: Mapping[str, str]) -> dict[str, Any]:
    page = data.diagnosis_page(reader, parts[0])
    return {"page": page, "intervention": data.intervention_text(page.body)}


def _comparison(reader: data.Reader, parts: list[str], _: Mapping[str, str]) -> dict[str, Any]:
    page = data.comparison_page(reader, parts[0])
    rows = []
    for m in page.body["metrics"]:
        diff = m.get("difference")
        if diff is None:
            continue
        # Every rule's margin on the metric, where the rule compares the interval with it.
        margins = tuple(v * 100 for v in report.rule_margins(page.body, m["metric"]))
        rows.append(
            svg.ForestRow(
                m["metric"],
                diff["estimate"] * 100,
                diff["lower"] * 100,
                diff["upper"] * 100,
                margins,
            )
        )
    return {"page": page, "forest": rows}


def _pair(reader: data.Reader, parts: list[str], _: Mapping[str, str]) -> dict[str, Any]:
    page = data.comparison_page(reader, parts[0])
    case_id = parts[1]
    sides = [
        data.case_page(reader, page.body[role]["run_id"], case_id)
        for role in ("baseline", "candidate")
    ]
    flips = [f for f in page.flips if f.case_id == case_id]
    return {"page": page, "case_id": case_id, "sides": sides, "flips": flips}


def _by_query(build: Builder) -> Builder:
    """``build`` of a case page, given the case id as ``?id=`` (any id, a dot segment too)."""

    def build_by_query(
        reader: data.Reader, parts: list[str], q: Mapping[str, str]
    ) -> dict[str, Any]:
        case_id = q.get("id")
        if not case_id:
            raise data.ViewError("no case is named: give its id, as ?id=CASE_ID")
        return build(reader, [*parts, case_id], q)

    return build_by_query


def _address(reader: data.Reader, parts: list[str], q: Mapping[str, str]) -> dict[str, Any]:
    page = data.address_page(reader, parts[0], rederive=q.get("rederive") == "1")
    return {"page": page, "target": data.page_of(page.address, page.event)}


_ROUTES: list[tuple[re.Pattern[str], Route]] = [
    (re.compile(r"/"), Route("runs.html", _runs)),
    (re.compile(r"/runs/([^/]+)"), Route("run.html", _run)),
    (re.compile(r"/runs/([^/]+)/failures"), Route("failures.html", _failures)),
    (re.compile(r"/runs/([^/]+)/cases/([^/]+)"), Route("case.html", _case)),
    (re.compile(r"/runs/([^/]+)/cases"), Route("case.html", _by_query(_case))),
    (re.compile(r"/diagnoses/([^/]+)"), Route("diagnosis.html", _diagnosis)),
    (re.compile(r"/comparisons/([^/]+)"), Route("comparison.html", _comparison)),
    (re.compile(r"/comparisons/([^/]+)/cases/([^/]+)"), Route("pair.html", _pair)),
    (re.compile(r"/comparisons/([^/]+)/cases"), Route("pair.html", _by_query(_pair))),
    (re.compile(r"/a/([^/]+)"), Route("address.html", _address)),
]


def render(reader: data.Reader, path: str, query: Mapping[str, str], links: Links) -> Iterator[str]:
    """The page at ``path`` as a stream of text (``FLUSH`` marks where to send what came so
    far); ``NotFound`` when the path or what it names does not exist."""
    for pattern, route in _ROUTES:
        found = pattern.fullmatch(path)
        if found is None:
            continue
        parts = [unquote(p) for p in found.groups()]
        try:
            context = route.build(reader, parts, query)
        except data.ViewError as exc:
            raise NotFound(str(exc)) from None
        return _stream(route.template, context, links)
    raise NotFound(f"no page at {path}")


def page_link(target: tuple[str, ...] | None, links: Links) -> str | None:
    """The URL of a page named by ``data.page_of``."""
    if target is None:
        return None
    kind, *names = target
    make: Callable[..., str] = getattr(links, kind)
    return make(*names)


def _stream(template: str, context: dict[str, Any], links: Links) -> Iterator[str]:
    env = environment()
    target = context.pop("target", None)
    generator = env.get_template(template).generate(
        links=links,
        linked=lambda text: linked(text, links),
        view_link=page_link(target, links),
        **context,
    )
    try:
        yield from generator
    except data.ViewError as exc:  # a lazily read part of the page names something missing
        yield f"<p class='error'>{escape(str(exc))}</p>"
    except Exception as exc:  # the status line is sent: the page can only end by saying so
        traceback.print_exc()
        yield f"<p class='error'>{escape(failure_text(exc))}</p>"


def error_page(message: str, links: Links, status: int) -> str:
    return (
        environment()
        .get_template("error.html")
        .render(message=message, status=status, links=links, linked=lambda t: linked(t, links))
    )
