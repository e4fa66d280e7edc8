-- run_trends: one row per flow run with what `veille trends` prints and charts, and its series
-- (corpus_dir and request_title: runs of two corpora are two series).
--   Spend (flow_run_*): every attempt's calls, tokens, duration and cost summed — a Retry pays
--   twice, and the failed attempt's spend stays in the night's cost.
--   Outcome (status, grader scores, alerts, rounds, report): the last attempt's;
--   scores_flow_run_attempt says which attempt that is, flow_run_attempts how many there were.
--   (Attempts of the flow run: Prefect retries. Requests within model calls: flow_run_call_attempts.)
-- Reads runs_summary: the `runs` rows (each carries its run's summary) from the summary index,
-- one small file for all runs (see veille/warehouse/commit.py, bench/warehouse_trends.py); the
-- attempt numbering is the one of run_attempts (veille/warehouse/views/attempts_runs.sql).
CREATE OR REPLACE VIEW run_trends AS
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
    FROM runs_summary
),
ranked AS (
    SELECT
        *,
        count(*) OVER (PARTITION BY run_key)::INTEGER AS flow_run_attempts,
        row_number() OVER (
            PARTITION BY run_key ORDER BY flow_run_attempt DESC, started_at DESC NULLS LAST, run_id DESC
        ) AS from_last,
        sum(cost_usd) OVER flow_run AS flow_run_cost_usd,
        bool_and(coalesce(cost_complete, false)) OVER flow_run AS flow_run_cost_complete,
        sum(calls) OVER flow_run AS flow_run_calls,
        sum(call_attempts) OVER flow_run AS flow_run_call_attempts,
        sum(failed_calls) OVER flow_run AS flow_run_failed_calls,
        sum(input_tokens) OVER flow_run AS flow_run_input_tokens,
        sum(output_tokens) OVER flow_run AS flow_run_output_tokens,
        sum(reasoning_tokens) OVER flow_run AS flow_run_reasoning_tokens,
        sum(duration_s) OVER flow_run AS flow_run_duration_s,
        min(run_date) OVER flow_run AS flow_run_date
    FROM numbered
    WINDOW flow_run AS (PARTITION BY run_key)
)
SELECT
    run_id,
    run_key,
    flow_run_id,
    flow_run_attempt AS scores_flow_run_attempt,
    flow_run_attempts,
    flow_run_date AS run_date,
    started_at,
    deployment,
    corpus_dir,
    request_title,
    status,
    backend,
    flow_run_duration_s,
    flow_run_calls,
    flow_run_call_attempts,
    flow_run_failed_calls,
    flow_run_input_tokens,
    flow_run_output_tokens,
    flow_run_reasoning_tokens,
    flow_run_input_tokens + flow_run_output_tokens + flow_run_reasoning_tokens AS flow_run_total_tokens,
    tokens_estimated,
    flow_run_cost_usd,
    flow_run_cost_complete,
    alerts,
    alerts_error,
    alerts_warning,
    rounds,
    validated,
    subtasks_failed,
    report_words,
    revision_gain,
    grade_status,
    final_scores['judge'] AS score_judge,
    final_scores['rouge_l'] AS score_rouge_l,
    final_scores['numeric'] AS score_numeric,
    final_scores['judge+similarity'] AS score_judge_similarity,
    final_scores['judge+numbers'] AS score_judge_numbers,
    final_scores['structure.contradictions'] AS score_contradictions,
    final_scores['structure.citations'] AS score_citations
FROM ranked
WHERE from_last = 1;
