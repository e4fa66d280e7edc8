-- Judge scores of report parts kept across nights (veille/graders/parts.py): one per digest of the
-- part (in id space), the reference, the request, the criteria and the judge's model key.
CREATE TABLE IF NOT EXISTS judged (key TEXT PRIMARY KEY, score REAL NOT NULL, details TEXT NOT NULL, run_id TEXT NOT NULL);
