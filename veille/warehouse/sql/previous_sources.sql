-- The numbered sources of one run's report. Parameter: $run_id.
SELECT number, source_id, kind, title FROM sources WHERE run_id = $run_id ORDER BY number;
