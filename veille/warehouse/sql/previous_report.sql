-- The report of one run (its Markdown) and its plan (plan.json as recorded). Parameter: $run_id.
SELECT
    (SELECT markdown FROM reports WHERE run_id = $run_id LIMIT 1) AS markdown,
    (SELECT plan_json FROM plans WHERE run_id = $run_id LIMIT 1) AS plan_json;
