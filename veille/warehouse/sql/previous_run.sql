-- The last completed run of a corpus before the run being made (veille.warehouse.previous, the
-- "what changed" comparison of issue 13). Parameters: $corpus, $run_id (never its own baseline).
SELECT run_id, started_at
FROM runs
WHERE corpus_dir = $corpus
  AND status = 'completed'
  AND run_id <> $run_id
ORDER BY started_at DESC NULLS LAST, run_id DESC
LIMIT 1;
