-- Quality regression check (veille.warehouse.quality): the judge scores of the final report of
-- the last $window completed flow runs of the same corpus, most recent first (run_trends: one
-- row per flow run, its last attempt). Parameters: $corpus, $run_id (the run being checked, never
-- its own baseline), $window, $version (the judge version of the run being checked: a report
-- judged by parts, version « N+parts », is on another scale than one judged whole, so only runs
-- judged the same way are its baseline; NULL: any version).
SELECT t.run_id, t.score_judge
FROM run_trends AS t
WHERE t.corpus_dir = $corpus
  AND t.status = 'completed'
  AND t.score_judge IS NOT NULL
  AND t.run_id <> $run_id
  AND (
    $version IS NULL
    OR EXISTS (
      SELECT 1
      FROM grader_scores AS g
      WHERE g.run_id = t.run_id AND g.grader = 'judge' AND g.target = 'final' AND g.version = $version
    )
  )
ORDER BY t.started_at DESC NULLS LAST, t.run_id DESC
LIMIT $window;
