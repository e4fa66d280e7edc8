"""Ingestion at scale: full ingest, no-change re-ingest and peak RSS for N synthetic documents.

Usage (figures recorded in docs/benchmarks.md):

    .venv/bin/python bench/ingest_scale.py --sizes 1000,10000,100000

For each N, documents of ~2 KB (front matter + French-looking body) are generated in a temporary
folder, then each phase runs in its own subprocess so that its peak RSS (``ru_maxrss`` of that process)
is measured alone:

- ``full``: ``ingest_corpus`` into a new database;
- ``nochange``: a second ``ingest_corpus`` with nothing changed (size+mtime shortcut, the default);
- ``nochange-hash``: the same with ``trust_file_stat=False`` (every file read and hashed);
- ``bulk``: the limit - parse every document first (timed apart), then one DuckDB insert of all rows
  from a single Arrow table (the naive parse-everything-then-load approach; its RSS shows why
  ``ingest_corpus`` streams in batches).

Files are in the page cache (just written): these are warm-cache figures.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SOURCE_TYPES = ("fiche-fournisseur", "benchmark-interne", "compte-rendu", "note-interne", "article-presse")
_WORDS_TEXT = (
    "débit latence moteur inférence plateforme coût licence sécurité correctif version fondation exploitation "
    "mesure charge GPU serveur référence annonce éditeur tokens requêtes pointe marge contrat support équipe "
    "projet calendrier dimensionnement stabilité mémoire quantification modèle"
)
WORDS = tuple(_WORDS_TEXT.split())


def generate(root: Path, n: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    docs = root / "docs"
    docs.mkdir(parents=True)
    (root / "request.md").write_text(
        "---\ntitle: Banc synthétique\n---\n\nDemande synthétique pour le banc d'ingestion.\n",
        encoding="utf-8",
    )
    width = len(str(n))
    for i in range(1, n + 1):
        body_words = [rng.choice(WORDS) for _ in range(260)]  # ~2 KB with the front matter
        lines = [" ".join(body_words[j : j + 13]) + "." for j in range(0, len(body_words), 13)]
        text = (
            "---\n"
            f"id: doc-{i:0{width}d}\n"
            f'date: "2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"\n'
            f"source_type: {rng.choice(SOURCE_TYPES)}\n"
            f'title: "Document synthétique {i} : {rng.choice(WORDS)} et {rng.choice(WORDS)}"\n'
            f'summary: "Résumé en une phrase du document {i}."\n'
            "---\n\n"
            f"# Document {i}\n\n" + "\n".join(lines) + "\n"
        )
        (docs / f"doc-{i:0{width}d}.md").write_text(text, encoding="utf-8")


# ------------------------------------------------------------------------------------- child phases
def _peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def child(phase: str, corpus: Path, db: Path) -> dict[str, float]:
    from veille.store.ingest import ingest_corpus

    base_rss = _peak_rss_mib()  # after importing duckdb, pyarrow, pydantic, yaml
    out: dict[str, float] = {"import_rss_mib": base_rss}
    if phase in ("full", "nochange", "nochange-hash"):
        t, cpu = time.perf_counter(), _cpu_seconds()
        report = ingest_corpus(corpus, db, trust_file_stat=(phase != "nochange-hash"))
        out["seconds"] = time.perf_counter() - t
        out["cpu_seconds"] = _cpu_seconds() - cpu
        out.update(added=report.added, unchanged=report.unchanged, documents=report.documents)
    elif phase == "bulk":
        import datetime

        import duckdb
        import pyarrow as pa

        from veille.corpus.document import parse_document_fields
        from veille.corpus.frontmatter import read_file
        from veille.corpus.sections import text_fingerprint
        from veille.store.migrations import migrate
        from veille.store.rows import _DOC_SCHEMA

        # Parse everything first, keeping every row (the naive approach), with the same parser.
        t = time.perf_counter()
        now = datetime.datetime.now()
        rows = []
        for path in sorted((corpus / "docs").glob("*.md")):
            st = path.stat()
            fields = parse_document_fields(read_file(path, max_bytes=None, st=st), path)
            rel = f"docs/{path.name}"
            text_hash, sketch = text_fingerprint(fields.body)
            origins = [fields.origins.get(k) for k in ("id", "title", "date", "source_type")]
            rows.append(
                (
                    *fields[:10],
                    rel,
                    st.st_size,
                    st.st_mtime_ns,
                    fields.unknown_fields,
                    "valid",
                    now,
                    now,
                    fields.format,
                    *origins,
                    text_hash,
                    sketch,
                )
            )
        columns = list(zip(*rows, strict=True))
        table = pa.Table.from_arrays(
            [pa.array(c, type=f.type) for c, f in zip(columns, _DOC_SCHEMA, strict=True)], schema=_DOC_SCHEMA
        )
        del rows, columns
        out["parse_seconds"] = time.perf_counter() - t
        # Then one insert of the whole Arrow table, default DuckDB settings: the limit for the load itself.
        con = duckdb.connect(str(db))
        migrate(con)
        t = time.perf_counter()
        con.execute("BEGIN TRANSACTION")
        con.from_arrow(table).insert_into("documents")
        con.execute("COMMIT")
        out["seconds"] = time.perf_counter() - t
        out["documents"] = table.num_rows
        con.close()
    else:
        raise SystemExit(f"unknown phase {phase}")
    out["peak_rss_mib"] = _peak_rss_mib()
    return out


def run_phase(phase: str, corpus: Path, db: Path, timeout: float) -> dict[str, float]:
    proc = subprocess.run(
        [sys.executable, __file__, "--child", phase, "--corpus", str(corpus), "--db", str(db)],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"phase {phase} failed:\n{proc.stderr[-3000:]}")
    result: dict[str, float] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="1000,10000,100000", help="comma-separated document counts")
    parser.add_argument("--workdir", type=Path, default=None, help="where to generate (default: a temp dir)")
    parser.add_argument("--timeout", type=float, default=900.0, help="per-phase timeout, seconds")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--corpus", type=Path, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--db", type=Path, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.child:
        print(json.dumps(child(args.child, args.corpus, args.db)))
        return

    work = Path(tempfile.mkdtemp(prefix="veille-bench-", dir=args.workdir))
    print(f"# load average before: {os.getloadavg()}; cpus: {os.cpu_count()}", flush=True)
    rows = []
    try:
        for n in (int(s) for s in args.sizes.split(",")):
            corpus = work / f"corpus-{n}"
            t = time.perf_counter()
            generate(corpus, n)
            gen_s = time.perf_counter() - t
            mib = sum(p.stat().st_size for p in (corpus / "docs").iterdir()) / 2**20
            db = work / f"ingest-{n}.duckdb"
            full = run_phase("full", corpus, db, args.timeout)
            nochange = run_phase("nochange", corpus, db, args.timeout)
            nochange_hash = run_phase("nochange-hash", corpus, db, args.timeout)
            bulk = run_phase("bulk", corpus, work / f"bulk-{n}.duckdb", args.timeout)
            assert full["documents"] == n and nochange["unchanged"] == n and nochange_hash["unchanged"] == n
            row = {
                "docs": n,
                "corpus_mib": round(mib, 1),
                "generate_s": round(gen_s, 1),
                "full_s": round(full["seconds"], 2),
                "full_cpu_s": round(full["cpu_seconds"], 2),
                "full_peak_rss_mib": round(full["peak_rss_mib"]),
                "nochange_s": round(nochange["seconds"], 2),
                "nochange_cpu_s": round(nochange["cpu_seconds"], 2),
                "nochange_peak_rss_mib": round(nochange["peak_rss_mib"]),
                "nochange_hash_s": round(nochange_hash["seconds"], 2),
                "bulk_parse_s": round(bulk["parse_seconds"], 2),
                "bulk_insert_s": round(bulk["seconds"], 2),
                "bulk_peak_rss_mib": round(bulk["peak_rss_mib"]),
                "import_rss_mib": round(full["import_rss_mib"]),
                "db_mib": round(db.stat().st_size / 2**20, 1),
            }
            rows.append(row)
            print(json.dumps(row), flush=True)
            shutil.rmtree(corpus)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    headers = list(rows[0]) if rows else []
    print("\n| " + " | ".join(headers) + " |")
    print("|" + "---|" * len(headers))
    for row in rows:
        print("| " + " | ".join(str(row[h]) for h in headers) + " |")


if __name__ == "__main__":
    main()
