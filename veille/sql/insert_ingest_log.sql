INSERT INTO ingest_log SELECT run_id, logged_at, path, doc_id, event, code, message FROM log_batch;
