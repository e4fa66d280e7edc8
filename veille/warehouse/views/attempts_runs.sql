-- run_attempts: every recorded run (one per attempt of a flow run, i.e. per Prefect retry), with
--   run_key                the flow run id, or the run id for a run without a Prefect flow run;
--   flow_run_attempt       the flow run's attempt (Prefect's run count; numbered by start time when
--                          the row has none: rows of schema version 1, runs that died before run.json);
--   flow_run_attempts      attempts recorded for that flow run;
--   last_flow_run_attempt  this row is its flow run's last attempt (what `runs` keeps);
--   flow_run_cost_usd      cost of all the flow run's attempts (a retry pays twice).
-- Not to be confused with llm_calls.call_attempt / runs.call_attempts: requests within a model call.
-- run_records reads old files' `attempt` as flow_run_attempt (schema v7, veille/warehouse/renames.py).
CREATE OR REPLACE VIEW run_attempts AS
WITH numbered AS (
    SELECT
        * REPLACE (
            coalesce(
                flow_run_attempt,
                row_number() OVER (
                    PARTITION BY coalesce(flow_run_id, run_id) ORDER BY started_at NULLS LAST, run_id
                )
            )::INTEGER AS flow_run_attempt
        ),
        coalesce(flow_run_id, run_id) AS run_key
    FROM run_records
)
SELECT
    *,
    count(*) OVER (PARTITION BY run_key)::INTEGER AS flow_run_attempts,
    row_number() OVER (
        PARTITION BY run_key ORDER BY flow_run_attempt DESC, started_at DESC NULLS LAST, run_id DESC
    ) = 1 AS last_flow_run_attempt,
    sum(cost_usd) OVER (PARTITION BY run_key) AS flow_run_cost_usd
FROM numbered;
