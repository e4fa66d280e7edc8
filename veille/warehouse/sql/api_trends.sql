-- veille.warehouse.api.trends: run_trends oldest first, optionally one corpus.
-- Parameters: $corpus (a corpus_dir, or NULL for all), $since (a DATE).
SELECT *
FROM run_trends
WHERE run_date >= $since
  AND ($corpus IS NULL OR corpus_dir = $corpus)
ORDER BY started_at NULLS LAST, run_id;
