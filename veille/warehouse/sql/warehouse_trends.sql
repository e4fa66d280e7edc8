-- `veille trends`: one row per flow run since $since (a DATE), by series (corpus, request) then
-- oldest first: every attempt's spend, the last attempt's scores (scores_flow_run_attempt). Columns:
-- veille/cli/chart.py TREND_COLUMNS.
SELECT
    run_date,
    started_at,
    run_id,
    run_key,
    scores_flow_run_attempt,
    flow_run_attempts,
    corpus_dir,
    request_title,
    status,
    flow_run_cost_usd,
    flow_run_cost_complete,
    flow_run_total_tokens,
    flow_run_calls,
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
ORDER BY corpus_dir NULLS LAST, request_title NULLS LAST, started_at NULLS LAST, run_id;
