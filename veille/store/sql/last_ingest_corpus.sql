SELECT corpus_dir FROM ingest_runs ORDER BY finished_at DESC LIMIT 1;
