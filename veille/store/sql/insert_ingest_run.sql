INSERT INTO ingest_runs (run_id, corpus_dir, strict, started_at, finished_at, added, updated, unchanged,
                         removed, skipped, documents)
VALUES ($run_id, $corpus_dir, $strict, $started_at, $finished_at, $added, $updated, $unchanged,
        $removed, $skipped, $documents);
