-- document_history: one row per corpus and document id, over every recorded run (issue 13):
-- when it was first seen, when its content last changed (a run whose snapshot holds another
-- content hash than the run before it on that corpus), its current hash, how many runs read it
-- and which runs' reports cited it (sources of kind 'corpus').
CREATE OR REPLACE VIEW document_history AS
WITH seen AS (
    SELECT
        r.corpus_dir,
        d.doc_id,
        d.content_hash,
        d.run_id,
        r.started_at,
        lag(d.content_hash) OVER (
            PARTITION BY r.corpus_dir, d.doc_id ORDER BY r.started_at NULLS FIRST, d.run_id
        ) AS previous_hash
    FROM documents AS d
    JOIN runs AS r ON r.run_id = d.run_id
),
per_document AS (
    SELECT
        corpus_dir,
        doc_id,
        min(started_at) AS first_seen_at,
        arg_min(run_id, started_at) AS first_seen_run,
        max(started_at) FILTER (
            WHERE previous_hash IS NULL OR previous_hash IS DISTINCT FROM content_hash
        ) AS last_changed_at,
        (count(*) FILTER (WHERE previous_hash IS DISTINCT FROM content_hash AND previous_hash IS NOT NULL))::INTEGER
            AS changes,
        arg_max(content_hash, started_at) AS content_hash,
        max(started_at) AS last_seen_at,
        count(*)::INTEGER AS runs
    FROM seen
    GROUP BY corpus_dir, doc_id
),
cited AS (
    SELECT
        r.corpus_dir,
        s.source_id AS doc_id,
        count(DISTINCT s.run_id)::INTEGER AS cited_runs,
        max(r.started_at) AS last_cited_at,
        list(DISTINCT s.run_id ORDER BY s.run_id) AS cited_in
    FROM sources AS s
    JOIN runs AS r ON r.run_id = s.run_id
    WHERE s.kind = 'corpus'
    GROUP BY r.corpus_dir, s.source_id
)
SELECT
    p.corpus_dir,
    p.doc_id,
    p.first_seen_at,
    p.first_seen_run,
    p.last_changed_at,
    p.changes,
    p.content_hash,
    p.last_seen_at,
    p.runs,
    coalesce(c.cited_runs, 0) AS cited_runs,
    c.last_cited_at,
    coalesce(c.cited_in, []::VARCHAR[]) AS cited_in
FROM per_document AS p
LEFT JOIN cited AS c ON c.corpus_dir = p.corpus_dir AND c.doc_id = p.doc_id
ORDER BY p.corpus_dir, p.doc_id;
