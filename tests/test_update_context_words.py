"""Property tests of the content-word rule of ``veille.steps.update_context.shown_previous``: which
figure-less previous findings of a document already read the incremental analyst is shown.

Over generated words (five letters or more: what the rule counts), documents read tonight and
previous findings without figures, each citing one document already read:

(a) a finding whose every content word is in one passage read tonight (the same subject, stated
    again or changed) is shown, whatever the documents' titles;
(b) a finding that shares no content word with any passage or title read tonight is not shown
    (code keeps it in the analysis: tests/test_update_context_properties.py);
(c) findings citing several documents are shown whatever they say.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from veille.roles.analyst import DocumentText, Finding, Findings
from veille.steps.update_context import shown_previous

KNOWN = ["doc-a", "doc-b"]


def _doc(doc_id: str, title: list[str], sentences: list[list[str]]) -> DocumentText:
    body = " ".join(" ".join(s).capitalize() + "." for s in sentences)
    return DocumentText(id=doc_id, date="2026-12-01", source_type="blog", title=" ".join(title), body=body)


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_a_finding_about_tonight_s_text_is_shown_one_about_nothing_of_it_is_not(data: st.DataObject) -> None:
    vocabulary = data.draw(st.lists(st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=5, max_size=9),
                                    min_size=12, max_size=30, unique=True))  # fmt: skip
    tonight_words = set(data.draw(st.lists(st.sampled_from(vocabulary), min_size=1, unique=True)))
    sentences = data.draw(
        st.lists(st.lists(st.sampled_from(sorted(tonight_words)), min_size=1, max_size=8, unique=True), min_size=1, max_size=4)
    )  # fmt: skip
    title = data.draw(st.lists(st.sampled_from(sorted(tonight_words)), max_size=3, unique=True))
    documents = [_doc("doc-e", title, sentences)]
    seen = {w for s in sentences for w in s} | set(title)
    elsewhere = [w for w in vocabulary if w not in seen]

    restated = data.draw(st.sampled_from(sentences))  # (a) every word in one passage
    unrelated = (
        data.draw(st.lists(st.sampled_from(elsewhere), min_size=1, max_size=6, unique=True))
        if elsewhere
        else []
    )
    several = data.draw(st.lists(st.sampled_from(vocabulary), min_size=1, max_size=6, unique=True))
    findings = [
        Finding(statement=" ".join(restated).capitalize() + ".", doc_ids=[data.draw(st.sampled_from(KNOWN))])
    ]
    if unrelated:
        findings.append(Finding(statement=" ".join(unrelated).capitalize() + ".", doc_ids=[KNOWN[0]]))
    findings.append(Finding(statement=" ".join(several).capitalize() + ".", doc_ids=list(KNOWN)))

    shown = shown_previous(Findings(findings=findings), KNOWN, documents).findings
    assert findings[0] in shown  # (a)
    if unrelated:
        assert findings[1] not in shown  # (b)
    assert findings[-1] in shown  # (c)
