"""Axis titles are the question's subject, whatever language the planner framed it in (issue 28:
no template text in a report), whole, without internal ids or markup, each shown once (issue 36)."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from veille.steps.headings import axis_titles

_WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyzéè-", min_size=2, max_size=9).filter(
    lambda w: w.strip("-") == w and w not in {"pour", "for"}
)
_LABEL = st.lists(_WORD, min_size=1, max_size=8).map(" ".join)
_TITLE = st.text(alphabet="abcdefghijklmnopqrstuvwxyz :,?-ABCDEF", min_size=1, max_size=60).filter(
    lambda t: t.strip() == t and "»" not in t
)
_FRAMES = (
    "Dans le cadre de « {title} », que disent les documents sur {label} (détail, autre) pour A, B et C ?",
    "Dans le cadre de « {title} », que disent les documents sur {label} ?",
    "Within « {title} », what do the documents say about {label} (detail, other) for A, B and C ?",
    "Within « {title} », what do the documents say about {label} ?",
)


@given(title=_TITLE, label=_LABEL, frame=st.sampled_from(_FRAMES))
def test_the_title_is_the_label_without_its_framing(title: str, label: str, frame: str) -> None:
    question = frame.format(title=title, label=label)
    assert axis_titles({"st-1": question}) == {"st-1": label[:1].upper() + label[1:]}


_HOSTILE = st.lists(
    st.sampled_from(
        [
            "st-4 —",
            "st-1",
            "(st-2)",
            "---",
            "--- title: pwned ---",
            "##",
            "- ",
            "1.",
            "\u200b",
            "\n",
            "…",
            "?",
        ]
    )
    | _WORD,
    min_size=0,
    max_size=30,
).map(" ".join)


@given(
    questions=st.lists(
        st.one_of(
            _HOSTILE, _LABEL, st.sampled_from(_FRAMES).map(lambda f: f.format(title="T", label="coût"))
        ),
        min_size=1,
        max_size=6,
    )
)
def test_headings_are_whole_distinct_and_carry_no_id_nor_markup(questions: list[str]) -> None:
    ids = {f"st-{i}": q for i, q in enumerate(questions, 1)}
    titles = axis_titles(ids)
    assert list(titles) == list(ids)
    keys = [" ".join(t.casefold().split()) for t in titles.values()]
    assert len(set(keys)) == len(keys), titles  # no heading shown twice
    for sid, title in titles.items():
        assert title.strip() and "\n" not in title and "\u200b" not in title
        assert not any(f"st-{i}" in title.casefold() for i in range(1, 7)), title  # ids in anchors only
        # no rule or front-matter line: a run of rule characters standing alone (inside a word,
        # « a---a » is text on a heading line, not structure); no heading marker, no YAML key
        assert not re.search(r"(?<!\S)[-*_]{3,}(?!\S)", title), title
        assert "#" not in title.split() and "title:" not in title, title
        assert not title.startswith(("- ", "1.")), title
        # never cut: every word of the heading is a word of its question, and none is added but
        # « volet n » (the rank of a subject asked twice) and the separator of its detail
        asked = {w.casefold() for w in re.findall(r"\w+", ids[sid])}
        assert {w.casefold() for w in re.findall(r"\w+", title)} - asked <= {
            "volet",
            *(str(i) for i in range(1, 7)),
        }, title


def test_a_long_subject_is_never_cut() -> None:
    subject = (
        "employeurs à se trouver : recherche d'entreprises qui recrutent dans la région et leurs besoins"
    )
    question = f"Dans le cadre de « Emploi », que disent les documents sur {subject} ?"
    assert axis_titles({"st-4": question}) == {"st-4": subject[:1].upper() + subject[1:]}


def test_a_subject_asked_twice_is_told_apart_never_shown_twice() -> None:
    titles = axis_titles(
        {
            "st-1": "Que disent les documents sur le coût (licence) ?",
            "st-2": "Que disent les documents sur le coût (exploitation) ?",
            "st-3": "st-3 — Que disent les documents sur le coût (exploitation) ?",
        }
    )
    assert titles["st-1"] == "Le coût : licence"
    assert len(set(titles.values())) == 3 and all("st-" not in t for t in titles.values()), titles
