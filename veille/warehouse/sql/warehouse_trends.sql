-- `veille trends`: one row per run since $since (a DATE), oldest first.
SELECT
    run_date,
    run_id,
    status,
    cost_usd,
    cost_complete,
    total_tokens,
    calls,
    score_judge,
    score_rouge_l,
    score_numeric,
    score_judge_numbers,
    alerts,
    alerts_error,
    rounds,
    revision_gain
FROM run_trends
WHERE run_date >= $since
ORDER BY started_at NULLS LAST, run_id;
