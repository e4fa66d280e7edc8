"""ROUGE-L's bit-parallel LCS equals the dynamic-programming table for any token lists.

``veille.graders.rouge.lcs_length`` computes the longest common subsequence with integer bit
operations (issue 40 item 1: grading's share of a warm night); the reference below is the textbook
table it replaced. Small alphabets make long common subsequences and repeated tokens likely. The long
report's table (4,500 × 4,200 cells) is filled a row at a time with numpy (``rows_lcs``): the same
table, 3 s of pure-Python loops less; the small cases check it against the loop version.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from veille.graders.rouge import lcs_length, rouge_l, tokenize


def table_lcs(a: list[str], b: list[str]) -> int:
    """The O(len(a)·len(b)) table, row by row."""
    previous = [0] * (len(b) + 1)
    for token in a:
        current = [0]
        for j, other in enumerate(b, start=1):
            current.append(previous[j - 1] + 1 if token == other else max(previous[j], current[j - 1]))
        previous = current
    return previous[-1]


def rows_lcs(a: list[str], b: list[str]) -> int:
    """The same table, each row computed at once: along a row the table is non-decreasing, so
    ``current[j] = max(current[j - 1], previous[j - 1] + 1 if a match else previous[j])`` is the
    running maximum of the second terms."""
    codes = {token: n for n, token in enumerate(dict.fromkeys([*a, *b]))}
    columns = np.array([codes[token] for token in b], dtype=np.int64)
    previous = np.zeros(len(b) + 1, dtype=np.int64)
    for token in a:
        step = np.where(columns == codes[token], previous[:-1] + 1, previous[1:])
        previous = np.concatenate(([0], np.maximum.accumulate(step)))
    return int(previous[-1])


tokens = st.lists(st.sampled_from(["le", "débit", "de", "Kestrel", "9,91", "l'", "x"]), max_size=80)
words = st.lists(st.text(min_size=1, max_size=3), max_size=40)


@settings(max_examples=400, deadline=None)
@given(tokens, tokens)
def test_bit_parallel_lcs_equals_the_table_on_repeated_tokens(a: list[str], b: list[str]) -> None:
    assert lcs_length(a, b) == table_lcs(a, b) == rows_lcs(a, b)


@settings(max_examples=200, deadline=None)
@given(words, words)
def test_bit_parallel_lcs_equals_the_table_on_any_strings(a: list[str], b: list[str]) -> None:
    assert lcs_length(a, b) == table_lcs(a, b) == lcs_length(b, a) == rows_lcs(a, b)


@given(tokens)
def test_a_list_shares_all_of_itself_and_nothing_with_the_empty_list(a: list[str]) -> None:
    assert lcs_length(a, a) == len(a)
    assert lcs_length(a, []) == lcs_length([], a) == 0


def test_a_long_report_against_its_reference_matches_the_table() -> None:
    # Beyond one machine word: thousands of positions, as a whole dossier against its reference.
    report = " ".join(f"mot{i % 97} débit {i % 13}" for i in range(1500))
    reference = " ".join(f"mot{i % 89} coût {i % 11}" for i in range(1400))
    _, details = rouge_l(report, reference)
    assert details["lcs"] == rows_lcs(tokenize(report), tokenize(reference))
