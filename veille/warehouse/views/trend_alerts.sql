-- alerts_by_code: how often each alert code fired, per night, corpus and severity (every attempt's
-- alerts: a failed attempt's alerts happened).
CREATE OR REPLACE VIEW alerts_by_code AS
SELECT
    a.run_date,
    r.corpus_dir,
    a.code,
    a.severity,
    count(*) AS alerts,
    count(DISTINCT a.run_id) AS runs
FROM alerts AS a
LEFT JOIN run_attempts AS r USING (run_id)
GROUP BY a.run_date, r.corpus_dir, a.code, a.severity;
