-- run_attempts: every recorded run (one per attempt of a flow run), with
--   run_key        the flow run id, or the run id for a run without a Prefect flow run;
--   attempt        the flow run's attempt (Prefect's run count; numbered by start time when the
--                  row has none: rows of schema version 1, runs that died before run.json);
--   attempt_count  attempts recorded for that flow run;
--   last_attempt   this row is its flow run's last attempt (what `runs` keeps);
--   flow_run_cost_usd  cost of all the flow run's attempts (a retry pays twice).
CREATE OR REPLACE VIEW run_attempts AS
WITH recorded AS (
    SELECT * FROM run_records
    UNION ALL BY NAME
    SELECT NULL::INTEGER AS attempt WHERE false  -- the column exists even if every file predates it
),
numbered AS (
    SELECT
        * REPLACE (
            coalesce(
                attempt,
                row_number() OVER (
                    PARTITION BY coalesce(flow_run_id, run_id) ORDER BY started_at NULLS LAST, run_id
                )
            )::INTEGER AS attempt
        ),
        coalesce(flow_run_id, run_id) AS run_key
    FROM recorded
)
SELECT
    *,
    count(*) OVER (PARTITION BY run_key)::INTEGER AS attempt_count,
    row_number() OVER (
        PARTITION BY run_key ORDER BY attempt DESC, started_at DESC NULLS LAST, run_id DESC
    ) = 1 AS last_attempt,
    sum(cost_usd) OVER (PARTITION BY run_key) AS flow_run_cost_usd
FROM numbered;
