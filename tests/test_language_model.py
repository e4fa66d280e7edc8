"""The language identifier's model is decompressed once per tree (issue 40 item 1) and the cached
copy answers exactly as py3langid's own model restricted to the same languages."""

from __future__ import annotations

import tempfile
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import veille.language_model as lm
from veille.language import _languages

SENTENCES = [
    "Le débit mesuré atteint 1 200 requêtes par seconde sur le banc de test.",
    "The measured throughput reaches 1,200 requests per second on the test bench.",
    "Die gemessene Leistung erreicht 1.200 Anfragen pro Sekunde auf dem Prüfstand.",
    "El rendimiento medido alcanza 1.200 solicitudes por segundo en el banco de pruebas.",
    "Il throughput misurato raggiunge 1.200 richieste al secondo sul banco di prova.",
    "",
    "42",
]


@cache
def _pair() -> tuple[Any, Any, int]:
    """py3langid's model as built from its LZMA file, and the copy read back from the tree cache
    (the loader must not build again), with the cache file's size."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        built = lm.load_identifier(_languages(), cache_dir=folder)  # builds and writes the cache
        files = list(folder.glob("langid-*.npz"))
        assert len(files) == 1
        original = lm._build
        lm._build = _refuse  # type: ignore[assignment]
        try:
            cached = lm.load_identifier(_languages(), cache_dir=folder)
        finally:
            lm._build = original  # type: ignore[assignment]
        return built, cached, files[0].stat().st_size


def _refuse(languages: list[str]) -> Any:
    raise AssertionError("the cached model was not used")


def test_the_cached_model_holds_the_same_arrays() -> None:
    built, cached, _ = _pair()
    assert list(cached.nb_classes) == list(built.nb_classes)
    assert cached.tk_nextmove == built.tk_nextmove and cached.tk_row == built.tk_row
    assert cached.tk_output == built.tk_output
    assert (cached.nb_ptc == built.nb_ptc).all() and (cached.nb_pc == built.nb_pc).all()
    for sentence in SENTENCES:
        assert cached.classify(sentence) == built.classify(sentence)


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=300))
def test_the_cached_model_answers_as_the_original_on_any_text(text: str) -> None:
    built, cached, _ = _pair()
    assert cached.classify(text) == built.classify(text)


def test_a_damaged_cache_is_rebuilt_and_no_cache_folder_costs_only_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    built, _, size = _pair()
    lm.load_identifier(_languages(), cache_dir=tmp_path)
    (path,) = tmp_path.glob("langid-*.npz")
    path.write_bytes(b"not a model")
    again = lm.load_identifier(_languages(), cache_dir=tmp_path)
    assert again.classify(SENTENCES[0]) == built.classify(SENTENCES[0])
    assert path.stat().st_size == size  # rewritten
    monkeypatch.setattr(lm, "tree_cache_dir", lambda: None)
    assert lm.load_identifier(_languages()).classify(SENTENCES[1]) == built.classify(SENTENCES[1])
