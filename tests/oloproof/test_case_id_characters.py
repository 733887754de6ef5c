"""Which characters a case id may hold: each must show as itself where the id is printed
(``oloproof.dataset.id_problem``). Checked over every code point of its kind, not a sample."""

from __future__ import annotations

import sys
import unicodedata

import pytest

from oloproof.dataset import id_problem, same_text

REFUSED_KINDS = ("Cc", "Cf", "Zl", "Zp")


def _all(*categories: str) -> list[str]:
    return [
        chr(c)
        for c in range(sys.maxunicode + 1)
        if unicodedata.category(chr(c)) in categories and not 0xD800 <= c <= 0xDFFF
    ]


def test_every_control_format_and_separator_character_is_refused_anywhere() -> None:
    accepted = [
        f"U+{ord(c):04X}"
        for c in _all(*REFUSED_KINDS)
        for text in (f"a{c}b", f"{c}ab", f"ab{c}")
        if id_problem(text) is None
    ]
    assert accepted == []


def test_every_space_but_u0020_is_refused_and_u0020_only_inside() -> None:
    spaces = _all("Zs")
    assert " " in spaces and "\u00a0" in spaces and "\u3000" in spaces
    assert [f"U+{ord(c):04X}" for c in spaces if id_problem(f"a{c}b") is None] == ["U+0020"]
    assert id_problem("a b  c") is None
    assert id_problem("ab  ") == (
        "'ab  ' ends with U+0020 SPACE, which does not show where the id is printed (it looks "
        "like 'ab'); write the id without it"
    )


def test_printable_ascii_and_letters_of_other_scripts_are_kept() -> None:
    kept = [chr(c) for c in range(0x21, 0x7F)] + list("éßΩжは中한ا")
    assert [c for c in kept if id_problem(f"a{c}b") is not None] == []


@pytest.mark.parametrize(
    "emoji",
    [
        "\U0001f469\u200d\U0001f4bb",  # technologist
        "\U0001f469\U0001f3fd\u200d\U0001f4bb",  # with a skin tone before the joiner
        "\U0001f3f3\ufe0f\u200d\U0001f308",  # rainbow flag: a presentation selector before it
        "\u2764\ufe0f\u200d\U0001f525",  # heart on fire
        "\U0001f9d1\u200d\U0001f91d\u200d\U0001f9d1",  # two joiners
        "\U0001f1eb\U0001f1f7",  # a flag of regional indicators
    ],
)
def test_emoji_joined_by_a_joiner_are_kept(emoji: str) -> None:
    assert id_problem(f"case {emoji}") is None


@pytest.mark.parametrize(
    "text", ["a\u200db", "\U0001f525\u200da", "a\u200d\U0001f525", "\u200d\U0001f525", "\u200d"]
)
def test_a_joiner_not_between_two_emoji_is_refused(text: str) -> None:
    assert id_problem(text) is not None


def test_a_joiner_between_emoji_does_not_make_another_id() -> None:
    assert same_text("\U0001f525\u200d\U0001f525") == same_text("\U0001f525\U0001f525")
    assert same_text("cafe\u0301") == same_text("caf\u00e9")


def test_a_control_without_a_name_is_still_named() -> None:
    assert id_problem("a\x01b") == (
        "'a\\x01b' holds U+0001 <control> (character 2), which does not show where "
        "the id is printed (it looks like 'ab'); write the id without it"
    )
