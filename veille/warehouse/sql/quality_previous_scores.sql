-- Quality regression check (veille.warehouse.quality): the judge scores of the final report of
-- the last $window completed flow runs of the same corpus, most recent first (run_trends: one
-- row per flow run, its last attempt). Parameters: $corpus, $run_id (the run being checked, never
-- its own baseline), $window.
SELECT run_id, score_judge
FROM run_trends
WHERE corpus_dir = $corpus
  AND status = 'completed'
  AND score_judge IS NOT NULL
  AND run_id <> $run_id
ORDER BY started_at DESC NULLS LAST, run_id DESC
LIMIT $window;
