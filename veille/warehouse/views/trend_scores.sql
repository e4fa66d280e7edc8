-- score_trend: mean score of the final report per grader (and grader version) per night.
-- Versions are kept apart: a new grader version measures differently.
CREATE OR REPLACE VIEW score_trend AS
SELECT
    run_date,
    grader,
    version,
    count(*) AS runs,
    round(avg(score), 3) AS mean_score,
    round(min(score), 3) AS min_score,
    round(max(score), 3) AS max_score
FROM grader_scores
WHERE target = 'final' AND score IS NOT NULL
GROUP BY run_date, grader, version;
