"""The flow's steps on a corpus without Prefect, over a real model client on the offline engine.

Shared by the offline engine's tests (determinism, end-to-end checks against reference/facts.yaml)
and the benchmarks (bench/offline_engine.py, bench/corpora_dossier.py).
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from pathlib import Path
from typing import Any

from veille.backends import build_client
from veille.corpus.request import load_request
from veille.grid import load_grid
from veille.run.folder import new_run_id
from veille.settings import Settings
from veille.steps.analyse import analyse_subtask
from veille.steps.catalogue import planner_catalogue, planner_reads_texts, text_relevance, with_texts
from veille.steps.finalize import finalize_report
from veille.steps.plan import make_plan
from veille.steps.plan_settle import settle_plan
from veille.steps.request_read import document_texts
from veille.steps.review import review_loop
from veille.steps.write import write_sourced_draft
from veille.store.ingest import ingest_corpus
from veille.store.readers import fetch_documents, read_catalogue

__all__ = ["digest", "run_bundled_pipeline"]


def digest(out: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(out, ensure_ascii=False, sort_keys=True).encode()).hexdigest()


def run_bundled_pipeline(corpus: Path, max_rounds: int = 3) -> dict[str, Any]:
    """The flow's steps on ``corpus`` without Prefect, each through the library function its task
    wraps, over a real ModelClient whose backend is the offline engine: ingest into a temporary
    DuckDB -> catalogue -> plan -> one analyst per sub-task -> sources numbered -> writer -> review
    loop -> final report.

    Returns only what the inputs determine (the determinism test digests it): no run id, call id,
    timestamp, latency or path. Each process runs with its own temp dir and a fresh run id, so any
    of them leaking into the output changes the digest.
    """
    with tempfile.TemporaryDirectory(prefix="veille-offline-engine-") as tmp:
        settings = Settings.from_params(
            corpus=str(corpus), backend="offline", max_rounds=max_rounds, use_cache=False, warehouse=tmp
        )
        ingested = ingest_corpus(settings.corpus_dir, settings.database, max_doc_bytes=settings.max_doc_bytes)
        assert ingested.documents > 0, ingested.alerts
        listing = read_catalogue(settings.database, with_summaries=settings.planner_sees_summaries)
        request = load_request(settings.corpus_dir)
        grid = load_grid(settings.grid_file, extra_mentions=request.mandatory_mentions)
        with build_client(settings, run_id=new_run_id()) as client:
            assert client.backend == "offline"
            shown = planner_catalogue(request, listing.entries, settings)
            if planner_reads_texts(client.role_backend("planner")):
                shown = with_texts(shown, settings.database)
            text = text_relevance(shown, settings.database)
            planned = make_plan(client, shown.data, text=text)
            # The request read once, and what each analyst reads settled by the documents' passages,
            # as the flow's plan task does (veille.tasks.plan).
            bodies = shown.data.texts or document_texts(
                settings.database, [e.id for e in shown.data.catalogue]
            )
            planned = settle_plan(
                planned,
                shown.data,
                bodies,
                budget=settings.analyst_token_budget,
                authority_file=settings.authority_file,
                text=text,
            )
            analyses = [
                analyse_subtask(client, st, fetch_documents(settings.database, st.doc_ids))
                for st in planned.plan.sub_tasks
            ]
            written = write_sourced_draft(
                client, analyses, request, grid, settings.database, reading=planned.reading
            )
            writer_input, sources, draft, write_alerts = (
                written.writer_input,
                written.sources,
                written.draft,
                written.alerts,
            )
            reviewed = review_loop(
                client,
                written.dossier,
                grid=grid,
                sources=sources,
                request=request.text,
                max_rounds=settings.max_rounds,
                axes=writer_input.axes,
                contradictions=len(writer_input.contradictions),
                context=written.verify,
                coverage=written.coverage,
            )
            records = client.journal.records()
    final = finalize_report(
        request.title,
        reviewed.final_dossier,
        sources,
        writer_input.axes,
        [a.question for a in analyses if a.status == "failed"],
    )
    return {
        "plan": planned.model_dump(mode="json"),
        "analyses": [a.model_dump(mode="json") for a in analyses],
        "writer_input": writer_input.model_dump(mode="json"),
        "sources": [s.model_dump(mode="json") for s in sources],
        "first_draft": draft,
        "rounds": [r.model_dump(mode="json") for r in reviewed.rounds],
        "validated": reviewed.validated,
        "draft": reviewed.final_draft,
        "alerts": [a.model_dump(mode="json") for a in (*write_alerts, *reviewed.alerts)],
        "report": final.markdown,
        "report_sources": [s.model_dump(mode="json") for s in final.sources],
        "removed_orphans": final.removed_orphans,
        # Token counts are estimated from the prompts: they pin the prompt builders too.
        "calls": [r.model_dump(mode="json", include=_CALL_FIELDS) for r in records],
    }


_CALL_FIELDS = {
    "role",
    "subtask_id",
    "attempt",
    "status",
    "model",
    "input_tokens",
    "output_tokens",
    "cost_usd",
}
