-- cost_by_role: cost, tokens and calls per role per night (from the call journal).
-- cost_complete is false when a call's model had no price (its cost is NULL, not 0).
CREATE OR REPLACE VIEW cost_by_role AS
SELECT
    run_date,
    role,
    count(DISTINCT run_id) AS runs,
    count(DISTINCT (run_id, call_id)) AS calls,  -- call ids are unique within a run only
    count(*) AS attempts,
    sum(input_tokens) AS input_tokens,
    sum(output_tokens + reasoning_tokens) AS output_tokens,
    round(sum(cost_usd), 6) AS cost_usd,
    bool_and(cost_usd IS NOT NULL) AS cost_complete
FROM llm_calls
GROUP BY run_date, role;
