-- revision_gain: did the review loop improve the dossier? The judge scores every round's draft
-- and the final report in one call (targets 'round-N' and 'final'); gain = final - first round.
-- corpus_dir keeps two watches apart.
CREATE OR REPLACE VIEW revision_gain AS
WITH judged AS (
    SELECT
        run_id,
        run_date,
        target,
        score,
        CASE WHEN target = 'final' THEN NULL
             ELSE try_cast(regexp_extract(target, 'round-(\d+)', 1) AS INTEGER) END AS round
    FROM grader_scores
    WHERE grader = 'judge' AND score IS NOT NULL
)
SELECT
    j.run_id,
    j.run_date,
    any_value(r.corpus_dir) AS corpus_dir,
    count(round) AS rounds_judged,
    arg_min(score, round) FILTER (WHERE round IS NOT NULL) AS first_round_score,
    max(score) FILTER (WHERE target = 'final') AS final_score,
    round(max(score) FILTER (WHERE target = 'final')
          - arg_min(score, round) FILTER (WHERE round IS NOT NULL), 3) AS gain,
    (max(score) FILTER (WHERE target = 'final')
     > arg_min(score, round) FILTER (WHERE round IS NOT NULL)) AS improved
FROM judged AS j
LEFT JOIN run_attempts AS r USING (run_id)
GROUP BY j.run_id, j.run_date;
