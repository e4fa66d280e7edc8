-- cost_by_role: cost, tokens and calls per role per night and corpus (from the call journal).
-- A night is a flow run: every attempt's calls count, on the date of its first attempt (a Retry
-- after midnight stays on its night). output_tokens exclude thinking (as in llm_calls);
-- reasoning_tokens are apart (billed as output). cost_complete is false when a call's model had
-- no price (its cost is NULL, not 0).
CREATE OR REPLACE VIEW cost_by_role AS
WITH flow_runs AS (
    SELECT run_id, run_key, corpus_dir, min(run_date) OVER (PARTITION BY run_key) AS flow_run_date
    FROM run_attempts
)
SELECT
    f.flow_run_date AS run_date,
    f.corpus_dir,
    c.role,
    count(DISTINCT f.run_key) AS runs,
    count(DISTINCT (c.run_id, c.call_id)) AS calls,  -- call ids are unique within a run only
    count(*) AS call_attempts,  -- llm_calls rows: requests of the calls (re-asks, retries)
    sum(c.input_tokens) AS input_tokens,
    sum(c.output_tokens) AS output_tokens,
    sum(c.reasoning_tokens) AS reasoning_tokens,
    round(sum(c.cost_usd), 6) AS cost_usd,
    bool_and(c.cost_usd IS NOT NULL) AS cost_complete
FROM llm_calls AS c
JOIN flow_runs AS f USING (run_id)
GROUP BY f.flow_run_date, f.corpus_dir, c.role;
