-- The catalogue the planner sees: one line per valid, non-removed document (order by id when reading).
CREATE OR REPLACE VIEW catalogue AS
SELECT
    id,
    strftime(date, '%Y-%m-%d') AS date,
    source_type,
    title,
    summary,
    id || ' | ' || strftime(date, '%Y-%m-%d') || ' | ' || source_type || ' | ' || title AS line
FROM documents
WHERE status = 'valid';
