-- `veille runs`: one row per flow run, the most recent first; flow_run_attempt "2/2" is a flow run retried
-- once, whose status and judge score are the last attempt's and whose calls, tokens and cost are
-- every attempt's. unretried: the flow run's last attempt failed and no later run of the same corpus
-- completed (nobody has rerun that night yet). Parameter: $limit (number of runs).
SELECT
    run_id,
    strftime(started_at AT TIME ZONE 'UTC', '%Y-%m-%d %H:%M') AS started_utc,
    status,
    scores_flow_run_attempt || '/' || flow_run_attempts AS flow_run_attempt,
    left(run_key, 8) AS flow_run,
    regexp_extract(coalesce(corpus_dir, ''), '([^/]*)/?$', 1) AS corpus,
    backend,
    deployment,
    flow_run_calls AS calls,
    flow_run_total_tokens AS total_tokens,
    round(flow_run_cost_usd, 4) AS cost_usd,
    flow_run_cost_complete AS cost_complete,
    alerts,
    rounds,
    validated,
    grade_status AS grades,
    round(score_judge, 3) AS judge,
    status = 'failed' AND NOT EXISTS (
        SELECT 1 FROM run_trends AS later
        WHERE later.status = 'completed' AND later.corpus_dir IS NOT DISTINCT FROM r.corpus_dir
          AND later.started_at > r.started_at
    ) AS unretried
FROM run_trends AS r
ORDER BY started_at DESC NULLS LAST, run_id DESC
LIMIT $limit;
