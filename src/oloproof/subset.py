"""Which cases of the dataset a run executes: all of them, or a subset chosen before it starts.

Requirements (``docs/running.md``, "Running a subset"):

1. ``filters`` keep the cases whose metadata matches: ``metadata.KEY=VALUE``, compared as text
   the way slices show values (``true``/``false`` for booleans). Filters on one key are
   alternatives; filters on different keys must all hold.
2. Then ``sample`` draws that many of the kept cases at random with ``seed``
   (``random.Random(seed).sample``), kept in file order: the same file, filters, size and seed
   always give the same cases, on any machine. Or ``limit`` keeps the first that many.
   ``sample`` and ``limit`` do not combine.
3. A filter on a key no case has, a selection that leaves no case, and a ``sample`` larger than
   the cases it draws from are mistakes (exit 2, before anything is written); the key's message
   suggests the closest metadata key, and the sample's names both numbers. So is a filter whose
   key a case's metadata key holding a dot would stand for (``dotted_problem``): the dot reads as
   nesting, so the filter could not match that case. So is a filter whose value matches cases
   holding it as two kinds that read as one text (the number 1 and the string "1"), which the
   text typed cannot tell apart, or whose key a case writes with other code points. Each
   message names
   the options as its caller spelled them (``oloproof.callargs.Spelling``): ``--sample 5`` for
   the command line, ``evaluate(): sample=5`` for the Python API.
4. The run records what chose its cases (``to_body``): a resumed run re-applies it, and the
   report says the run covers a subset (``describe``), so a run of 10 cases is never read as a
   run of the suite.
5. ``nested_with`` says, from what two runs of one file recorded alone, whether one run's
   cases are all among the other's (``oloproof.compare`` counts the cases neither ran once).
6. ``left_out`` says whether ``sample`` or ``limit`` may have left out cases the filters kept,
   from what the run recorded alone: a count of failures over such a run says nothing of the
   cases left out (``oloproof.policy``). Filters are a deliberate choice of the cases to gate.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from oloproof import strictjson
from oloproof.callargs import INT_MAX, OPTIONS, Spelling, shown, whole
from oloproof.dataset import Case, dotted_key, dotted_refusal, lookalike_key, lookalike_refusal
from oloproof.errors import ConfigError
from oloproof.suggest import did_you_mean

_PREFIX = "metadata."


@dataclass(frozen=True)
class Selection:
    """What chooses a run's cases; all defaults: every case."""

    limit: int | None = None
    sample: int | None = None
    seed: int | None = None
    filters: tuple[tuple[str, str], ...] = field(default_factory=tuple)

    @property
    def everything(self) -> bool:
        return self.limit is None and self.sample is None and not self.filters

    def checked(self, spelled: Spelling) -> Selection:
        """This selection with each field checked by type, as a Python caller may build it
        (``plan.restrict``): unchecked, ``limit=True`` would be 1 case and ``limit="5"`` fail
        deep inside. Their ranges are ``select``'s to check."""
        where = spelled.function

        def counted(name: str, value: object, what: str) -> int | None:
            if value is None:
                return None
            return whole(spelled.name(name), value, f"{what} (an int) or None", where=where)

        pairs = self.filters
        if not isinstance(pairs, tuple) or not all(
            isinstance(pair, tuple) and len(pair) == 2 and all(isinstance(x, str) for x in pair)
            for pair in pairs
        ):
            raise ConfigError(
                f"selection.filters is a tuple of (key, value) pairs of str, not {shown(pairs)}",
                where=where,
            )
        return replace(
            self,
            limit=counted("limit", self.limit, "a number of cases"),
            sample=counted("sample", self.sample, "a number of cases"),
            seed=counted("seed", self.seed, "the seed of sample's draw"),
        )

    def check_new(self, spelled: Spelling) -> None:
        """Refuse what a new run could not record, or draw again from what it records
        (requirement 4), as ``oloproof run`` and ``evaluate`` refuse it before calling here: a
        sample without its seed (``random.Random(None)`` draws other cases each time, so a
        resume or ``inspect`` would name cases the run never drew), a seed without a sample, a
        negative seed (``random.Random`` takes its size alone) and a limit or seed larger than
        a run records."""
        where = spelled.function
        if self.seed is not None and self.sample is None:
            raise ConfigError(
                f"{spelled.name('seed')} chooses the cases of {spelled.name('sample')}; "
                f"give {spelled.wanted('sample', 'N')} with it",
                where=where,
            )
        if self.sample is not None and self.seed is None:
            raise ConfigError(
                f"{spelled.name('sample')} draws its cases with {spelled.name('seed')}: "
                f"without one, no resume could draw them again; give "
                f"{spelled.wanted('seed', 'N')} with it",
                where=where,
            )
        # A sample that large is more than the cases it draws from, which ``select`` says.
        for name, value in (("limit", self.limit), ("seed", self.seed)):
            if value is not None and value > INT_MAX:
                raise ConfigError(
                    f"{spelled.given(name, value)} is larger than a run records (at most "
                    f"{INT_MAX})",
                    where=where,
                )
        if self.seed is not None and self.seed < 0:
            raise ConfigError(
                f"{spelled.given('seed', self.seed)}: a seed is 0 or more ({-self.seed} draws "
                f"what {self.seed} would)",
                where=where,
            )

    def to_body(self) -> dict[str, Any]:
        return {
            "limit": self.limit,
            "sample": self.sample,
            "seed": self.seed,
            "filters": [f"{key}={value}" for key, value in self.filters],
        }

    @staticmethod
    def from_body(body: Mapping[str, Any] | None) -> Selection:
        if not body:
            return Selection()
        return Selection(
            limit=body.get("limit"),
            sample=body.get("sample"),
            seed=body.get("seed"),
            filters=tuple(parse_filter(text) for text in body.get("filters") or ()),
        )

    def describe(self, selected: int, total: int) -> str:
        """``a subset: 10 of 200 cases (sample 10, seed 7; metadata.topic=billing)``."""
        how = []
        if self.sample is not None:
            how.append(f"sample {self.sample}, seed {self.seed}")
        if self.limit is not None:
            how.append(f"the first {self.limit}")
        how += [f"{key}={value}" for key, value in self.filters]
        return f"a subset: {selected} of {total} cases ({'; '.join(how)})"

    def nested_with(self, other: Selection) -> bool:
        """Whether, over one cases file, the cases this selection or ``other`` keeps are all
        among the other's, so that the two keep no more cases between them than the larger
        does: equal selections, any selection beside the whole file, and two first parts
        (``limit``, or none) of the same filtered cases. A sample holds cases no other
        selection need hold."""
        if self == other or self.everything or other.everything:
            return True
        same_filters = sorted(self.filters) == sorted(other.filters)
        return self.sample is None and other.sample is None and same_filters

    def left_out(self, planned: int, total: int) -> bool:
        """Whether ``sample`` or ``limit`` may have left out cases that the filters kept, for a
        run that planned ``planned`` of the ``total`` cases of its file.

        Only what the run recorded is known, not how many cases the filters kept: a sample or
        limit larger than the run (a limit past the filtered cases; a sample recorded before
        such samples were refused), or a run of every case of the file, left none out; any
        other may have.
        """
        chosen = self.sample if self.sample is not None else self.limit
        if chosen is None or planned < chosen:
            return False
        return planned < total


def parse_filter(text: str, spelled: Spelling = OPTIONS) -> tuple[str, str]:
    """``metadata.topic=billing`` as (``metadata.topic``, ``billing``)."""
    key, sep, value = text.partition("=")
    key = key.strip()
    if not sep or not key.startswith(_PREFIX) or len(key) == len(_PREFIX):
        raise ConfigError(
            f"{spelled.item('filters', repr(text))}: write it as metadata.KEY=VALUE "
            "(e.g. metadata.topic=billing)",
            where=spelled.function,
        )
    return key, value.strip()


def _text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _metadata_datum(case: Case, key: str) -> Any:
    value: Any = case.metadata
    for part in key[len(_PREFIX) :].split("."):
        value = value.get(part) if isinstance(value, Mapping) else None
    return value


def _metadata_value(case: Case, key: str) -> str | None:
    return _text(_metadata_datum(case, key))


def held_as(datum: Any) -> str:
    """``the number 1``, ``the string "1"``: a metadata value as a case holds it, for an error
    about values of two kinds that read as one text."""
    return f"the {strictjson.kind(datum).split(' ', 1)[1]} {json.dumps(datum)}"


def dotted_problem(cases: Iterable[Case], name: str) -> str | None:
    """Why ``name`` (``metadata.a.b``) cannot read the metadata of the first case whose key
    holding a dot it passes (``dataset.dotted_key``): no filter or slice can name that key,
    and one that means it would silently read the case as having no value."""
    parts = name[len(_PREFIX) :].split(".")
    for case in cases:
        dotted = dotted_key(case.metadata, parts)
        if dotted is not None:
            return dotted_refusal(f"case {case.id!r} has the metadata key", dotted, name)
    return None


def _lookalike_problem(cases: Iterable[Case], name: str) -> str | None:
    parts = name[len(_PREFIX) :].split(".")
    for case in cases:
        alike = lookalike_key(case.metadata, parts)
        if alike is not None:
            holder = f"case {case.id!r} (line {case.line}) has the metadata key"
            return lookalike_refusal(holder, alike, "the filter")
    return None


def select(
    cases: Sequence[Case],
    selection: Selection,
    *,
    recorded: bool = False,
    spelled: Spelling = OPTIONS,
) -> list[Case]:
    """The cases ``selection`` keeps, in file order (see the module's requirements).

    ``recorded``: ``selection`` is what a run recorded, applied again (to resume it, or to name
    its cases). A run recorded before a sample larger than its cases was refused ran them all,
    and is given them all again. ``spelled``: how the errors name the options.
    """
    where = spelled.function
    if selection.sample is not None and selection.limit is not None:
        raise ConfigError(
            f"{spelled.name('sample')} and {spelled.name('limit')} choose cases two ways; "
            "give one of them",
            where=where,
        )
    for name, count in (("limit", selection.limit), ("sample", selection.sample)):
        if count is not None and count < 1:
            raise ConfigError(f"{spelled.name(name)} must be 1 or more, not {count}", where=where)
    kept = list(cases)
    if selection.filters:
        if not recorded:  # a recorded run chose its cases by it: its resume chooses them again
            _refuse_unreadable_keys(kept, selection.filters, spelled)
        kept = _filtered(kept, selection.filters, spelled)
        if not recorded:
            _refuse_two_kinds(kept, selection.filters, spelled)
    if selection.sample is not None:
        if selection.sample > len(kept) and not recorded:
            raise ConfigError(_oversized(selection, len(kept), spelled), where=where)
        if selection.sample < len(kept):
            chosen = set(random.Random(selection.seed).sample(range(len(kept)), selection.sample))
            kept = [case for i, case in enumerate(kept) if i in chosen]
    elif selection.limit is not None:
        kept = kept[: selection.limit]
    return kept


def _oversized(selection: Selection, kept: int, spelled: Spelling) -> str:
    if selection.filters:
        texts = [f"{key}={value}" for key, value in selection.filters]
        if spelled.function is None:  # each filter is an option of its own
            filters = " ".join(spelled.given("filters", text) for text in texts)
        else:
            filters = spelled.given("filters", texts)
        among = f"the {kept} selected by {filters}"
    else:
        among = f"the {kept} in the cases file"
    return (
        f"{spelled.given('sample', selection.sample)} asks for more cases than {among}; "
        f"drop {spelled.name('sample')} to run them all"
    )


def _refuse_unreadable_keys(
    cases: list[Case], filters: Sequence[tuple[str, str]], spelled: Spelling
) -> None:
    """Refuse a filter's key that a case holds in a way the filter cannot read: holding a dot
    (``dotted_problem``), or written with other code points (``dataset.lookalike_key``). The
    filter would leave the case out, though its key prints as the filter's does."""
    for key in dict(filters):
        problem = dotted_problem(cases, key) or _lookalike_problem(cases, key)
        if problem is not None:
            raise ConfigError(f"{spelled.item('filters', key)}: {problem}", where=spelled.function)


def _refuse_two_kinds(
    kept: list[Case], filters: Sequence[tuple[str, str]], spelled: Spelling
) -> None:
    """Refuse a filter that kept cases holding its value as two kinds of one text (the number
    1 and the string "1"): its value is text, so whether it meant one kind or both cannot be
    known, as a slice cannot tell them apart in one row (``plancheck``)."""
    for key, value in filters:
        first: tuple[str, Case] | None = None  # the first kept case's kind, and the case
        for case in kept:
            datum = _metadata_datum(case, key)
            if _text(datum) != value:
                continue
            if first is None:
                first = strictjson.kind(datum), case
            elif first[0] != strictjson.kind(datum):
                seen = first[1]
                datum_seen = _metadata_datum(seen, key)
                raise ConfigError(
                    f"{spelled.item('filters', f'{key}={value}')}: matches case {seen.id!r} "
                    f"(line {seen.line}), holding {held_as(datum_seen)}, and case {case.id!r} "
                    f"(line {case.line}), holding {held_as(datum)}: values of two kinds that "
                    "the filter's text cannot tell apart; write the value one way in both",
                    where=spelled.function,
                )


def _filtered(
    cases: list[Case], filters: Sequence[tuple[str, str]], spelled: Spelling
) -> list[Case]:
    wanted: dict[str, set[str]] = {}
    for key, value in filters:
        wanted.setdefault(key, set()).add(value)
    for key in wanted:
        if not any(_metadata_value(case, key) is not None for case in cases):
            known = sorted({_PREFIX + k for case in cases for k in case.metadata})
            raise ConfigError(
                f"{spelled.item('filters', key)}: no case has this metadata key"
                f"{did_you_mean(key, known)}",
                where=spelled.function,
            )
    kept = [
        case
        for case in cases
        if all(_metadata_value(case, key) in values for key, values in wanted.items())
    ]
    if not kept:
        shown = " and ".join(f"{k} in {sorted(v)}" for k, v in wanted.items())
        raise ConfigError(f"{spelled.name('filters')}: no case has {shown}", where=spelled.function)
    return kept
