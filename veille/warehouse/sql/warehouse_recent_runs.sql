-- `veille runs`: the most recent runs first. Parameter: $limit (number of runs).
SELECT
    run_id,
    strftime(started_at AT TIME ZONE 'UTC', '%Y-%m-%d %H:%M') AS started_utc,
    status,
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
