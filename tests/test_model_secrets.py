"""The API key: sources, masking, scrubbing, and backend selection."""

from __future__ import annotations

import logging
import pickle
import uuid
from pathlib import Path

import pytest

from veille.backends import build_backend, build_client
from veille.secrets import MissingApiKeyError, ScrubFilter, SecretValue, resolve_api_key, scrub
from veille.settings import Settings

CANARY = "CANARY-7d0e-secret"


def test_google_api_key_wins_over_gemini_api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", "from-gemini")
    monkeypatch.setenv("GOOGLE_API_KEY", "from-google")
    key = resolve_api_key(Settings())
    assert key is not None and key.get() == "from-google"

    monkeypatch.delenv("GOOGLE_API_KEY")
    key = resolve_api_key(Settings())
    assert key is not None and key.get() == "from-gemini"

    monkeypatch.delenv("GEMINI_API_KEY")
    assert resolve_api_key(Settings()) is None


def test_secret_value_is_masked_and_not_picklable() -> None:
    secret = SecretValue(CANARY)
    assert CANARY not in repr(secret) and CANARY not in str(secret) and CANARY not in f"{secret}"
    with pytest.raises(TypeError):
        pickle.dumps(secret)


def test_scrub_masks_the_secret_and_key_query_parameters() -> None:
    text = f"failed: {CANARY} at https://x.example/v1?alt=json&key=ABCDEF other"
    cleaned = scrub(text, SecretValue(CANARY))
    assert CANARY not in cleaned and "ABCDEF" not in cleaned
    assert "alt=json" in cleaned


def test_scrub_filter_cleans_log_records(caplog: pytest.LogCaptureFixture) -> None:
    logger = logging.getLogger("veille.test.scrub")
    log_filter = ScrubFilter(SecretValue(CANARY))
    logger.addFilter(log_filter)
    try:
        with caplog.at_level(logging.INFO, logger="veille.test.scrub"):
            logger.info("retrying after %s", f"error mentioning {CANARY}")
    finally:
        logger.removeFilter(log_filter)
    assert "retrying after error mentioning ***" in caplog.text
    assert CANARY not in caplog.text


def test_gemini_without_a_key_is_a_clear_error(tmp_path: Path) -> None:
    settings = Settings(backend="gemini", warehouse_dir=tmp_path)
    with pytest.raises(MissingApiKeyError, match="GOOGLE_API_KEY or GEMINI_API_KEY"):
        build_client(settings, run_id="r")


def test_auto_backend_picks_gemini_when_a_key_is_set(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("GOOGLE_API_KEY", CANARY)
    backend = build_backend(Settings(warehouse_dir=tmp_path))
    assert backend.name == "gemini"
    assert CANARY not in repr(backend)
    with pytest.raises(TypeError):
        pickle.dumps(backend)


def test_auto_backend_without_a_key_is_the_offline_engine(tmp_path: Path) -> None:
    client = build_client(Settings(warehouse_dir=tmp_path), run_id="r")
    try:
        assert client.backend == "offline"
    finally:
        client.close()


def test_key_from_a_prefect_secret_block(prefect_harness: None, tmp_path: Path) -> None:
    from prefect.blocks.system import Secret

    name = f"gemini-key-{uuid.uuid4().hex[:8]}"
    Secret(value=CANARY).save(name)
    settings = Settings(api_key_secret_block=name, warehouse_dir=tmp_path)

    key = resolve_api_key(settings)

    assert key is not None and key.get() == CANARY
    assert settings.resolved_backend() == "gemini"
    assert CANARY not in settings.model_dump_json()


def test_unknown_secret_block_is_named(prefect_harness: None, tmp_path: Path) -> None:
    settings = Settings(api_key_secret_block="no-such-block", warehouse_dir=tmp_path)
    with pytest.raises(MissingApiKeyError, match="no-such-block"):
        resolve_api_key(settings)
