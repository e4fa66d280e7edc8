-- score_trend: mean score of the final report per corpus, grader (and grader version) per night.
-- Corpora are kept apart (two watches are two series), and so are versions: a new grader version
-- measures differently. Scores are those of each flow run's last attempt (the `runs` view).
CREATE OR REPLACE VIEW score_trend AS
SELECT
    s.run_date,
    r.corpus_dir,
    s.grader,
    s.version,
    count(*) AS runs,
    round(avg(s.score), 3) AS mean_score,
    round(min(s.score), 3) AS min_score,
    round(max(s.score), 3) AS max_score
FROM grader_scores AS s
JOIN runs AS r USING (run_id)
WHERE s.target = 'final' AND s.score IS NOT NULL
GROUP BY s.run_date, r.corpus_dir, s.grader, s.version;
