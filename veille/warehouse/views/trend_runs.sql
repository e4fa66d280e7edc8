-- run_trends: one row per run with what `veille trends` prints and charts (cost, tokens, grader
-- scores, alerts, rounds). Reads runs_summary: the `runs` rows (each carries its run's summary)
-- from the summary index, one small file for all runs (see veille/warehouse/commit.py, bench/warehouse_trends.py).
CREATE OR REPLACE VIEW run_trends AS
SELECT
    run_id,
    run_date,
    started_at,
    deployment,
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
FROM runs_summary;
