"""Axis titles are the question's subject, whatever language the planner framed it in (issue 28:
no template text in a report)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from veille.dossier import axis_titles

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
    assert axis_titles({"st-1": question}) == {"st-1": f"st-1 — {label[:1].upper() + label[1:]}"}
