-- `veille runs`: one row per flow run (its last attempt), the most recent first; attempt "2/2"
-- is a flow run retried once. Parameter: $limit (number of runs).
SELECT
    run_id,
    strftime(started_at AT TIME ZONE 'UTC', '%Y-%m-%d %H:%M') AS started_utc,
    status,
    attempt || '/' || attempt_count AS attempt,
    left(run_key, 8) AS flow_run,
    regexp_extract(coalesce(corpus_dir, ''), '([^/]*)/?$', 1) AS corpus,
    backend,
    deployment,
    calls,
    total_tokens,
    round(cost_usd, 4) AS cost_usd,
    cost_complete,
    alerts,
    rounds,
    validated,
    grade_status AS grades,
    round(score_judge, 3) AS judge
FROM run_trends
ORDER BY started_at DESC NULLS LAST, run_id DESC
LIMIT $limit;
