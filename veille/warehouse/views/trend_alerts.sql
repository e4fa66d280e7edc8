-- alerts_by_code: how often each alert code fired, per night and severity.
CREATE OR REPLACE VIEW alerts_by_code AS
SELECT
    run_date,
    code,
    severity,
    count(*) AS alerts,
    count(DISTINCT run_id) AS runs
FROM alerts
GROUP BY run_date, code, severity;
