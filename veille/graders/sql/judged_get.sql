SELECT key, score, details, run_id FROM judged WHERE key IN ({marks})
