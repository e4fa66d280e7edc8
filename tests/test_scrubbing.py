"""The one scrubbing function every writer uses (veille.secrets.scrub_text) and its Parquet and
logging sides: for any text around a configured secret, the secret is gone; text without one is
left as it is (nothing else masked)."""

from __future__ import annotations

import logging

import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from veille.delivery.config import register_delivery_secrets
from veille.secrets import configured_secrets, install_log_scrubbing, register_secret, scrub_data, scrub_text
from veille.warehouse.scrubbing import scrub_table

KEY = "AIzaSyCANARY-scrub-1e2d3c4b"
PASSWORD = "pw-CANARY-scrub-9a8b"
URL = f"mailtos://veille:{PASSWORD}@smtp.example.org:465"
# Text that cannot hold a canary by chance (no 'CANARY'), markup and control characters included.
AROUND = st.text(alphabet=st.characters(blacklist_characters="C"), max_size=80)


@pytest.fixture(autouse=True)
def _secrets(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    corpus = tmp_path_factory.mktemp("corpus")
    (corpus / "delivery.toml").write_text('[email]\nto = ["equipe@example.org"]\n', encoding="utf-8")
    assert register_delivery_secrets(corpus, {"VEILLE_SMTP_URL": URL}) == 1  # as a night starts


def test_the_key_and_the_delivery_url_and_its_password_are_known() -> None:
    assert {KEY, PASSWORD, URL} <= set(configured_secrets())


def test_a_database_url_in_the_environment_does_not_make_a_word_secret(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PREFECT_API_DATABASE_CONNECTION_URL", "postgresql://prefect:prefect@db/prefect")
    assert scrub_text("le serveur prefect répond") == "le serveur prefect répond"


@given(AROUND, AROUND, st.sampled_from([KEY, PASSWORD, URL, f"key={KEY}&x=1", f"{KEY}{KEY}"]))
def test_a_secret_in_any_text_is_masked(before: str, after: str, secret: str) -> None:
    cleaned = scrub_text(before + secret + after)
    assert KEY not in cleaned and PASSWORD not in cleaned
    assert scrub_text(cleaned) == cleaned  # idempotent: a second writer changes nothing


@given(st.text(alphabet=st.characters(blacklist_characters="C@"), max_size=200))
def test_text_without_a_secret_is_left_as_is(text: str) -> None:
    assert scrub_text(text) == text


def test_an_example_password_is_left_as_written_and_registered_values_are_masked() -> None:
    # Requests' 2.32.0 release notes (tests/corpora/clients-http/docs/doc-03.md): a quotation.
    example = "When proxies are defined with user info (`https://user:pass@proxy:8080`), Requests"
    assert scrub_text(example) == example
    register_secret("slack-token-CANARY-77aa")  # a webhook's token in its path
    assert scrub_text("slack://T000/B000/slack-token-CANARY-77aa") == "slack://T000/B000/***"


def test_json_data_and_parquet_tables_are_scrubbed_cell_by_cell() -> None:
    data = {"error": f"got {KEY!r}", "nested": [{"url": URL}], "n": 3}
    assert KEY not in str(scrub_data(data)) and PASSWORD not in str(scrub_data(data))
    table = pa.table(
        {
            "message": [f"bad key {KEY}", None, "fine"],
            "tags": [["a", URL], None, []],
            "n": [1, 2, 3],
        }
    )
    cleaned = scrub_table(table)
    assert cleaned.schema == table.schema and cleaned.column("n") == table.column("n")
    assert cleaned.column("message").to_pylist() == ["bad key ***", None, "fine"]
    assert PASSWORD not in str(cleaned.column("tags").to_pylist())
    untouched = pa.table({"message": ["rien", "à", "masquer"]})
    assert scrub_table(untouched) is untouched or scrub_table(untouched).equals(untouched)


def test_every_log_record_is_scrubbed_whatever_its_logger_and_exception(
    caplog: pytest.LogCaptureFixture,
) -> None:
    install_log_scrubbing()
    caplog.set_level(logging.DEBUG)
    logging.getLogger("some.library").warning("sending to %s with %s", URL, KEY)
    try:
        raise RuntimeError(f"refused: {KEY}")
    except RuntimeError:
        logging.getLogger("prefect.task_runs").exception("failed")
    assert KEY not in caplog.text and PASSWORD not in caplog.text
    assert "***" in caplog.text and "RuntimeError" in caplog.text
