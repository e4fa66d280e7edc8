-- run_trends: one row per flow run (its last attempt; attempt / attempt_count say how many there
-- were) with what `veille trends` prints and charts (cost, tokens, grader scores, alerts,
-- rounds), and its series: corpus_dir and request_title (runs of two corpora are two series).
-- Reads runs_summary: the `runs` rows (each carries its run's summary) from the summary index,
-- one small file for all runs (see veille/warehouse/commit.py, bench/warehouse_trends.py); the
-- attempt numbering is the one of run_attempts (veille/warehouse/views/attempts_runs.sql).
CREATE OR REPLACE VIEW run_trends AS
WITH recorded AS (
    SELECT * FROM runs_summary
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
),
ranked AS (
    SELECT
        *,
        count(*) OVER (PARTITION BY run_key)::INTEGER AS attempt_count,
        row_number() OVER (
            PARTITION BY run_key ORDER BY attempt DESC, started_at DESC NULLS LAST, run_id DESC
        ) AS from_last,
        sum(cost_usd) OVER (PARTITION BY run_key) AS flow_run_cost_usd
    FROM numbered
)
SELECT
    run_id,
    run_key,
    flow_run_id,
    attempt,
    attempt_count,
    run_date,
    started_at,
    deployment,
    corpus_dir,
    request_title,
    status,
    backend,
    duration_s,
    calls,
    attempts,
    failed_calls,
    input_tokens,
    output_tokens,
    reasoning_tokens,
    input_tokens + output_tokens + reasoning_tokens AS total_tokens,
    tokens_estimated,
    cost_usd,
    cost_complete,
    flow_run_cost_usd,
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
