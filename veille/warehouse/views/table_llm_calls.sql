-- View over the 'llm_calls' table. The call journal: one row per attempt of one model call (tokens, cost, latency, status).
-- Partition column run_date (DATE) comes from the Hive path; union_by_name keeps older
-- partitions readable after a schema migration (missing columns read as NULL).
-- Hidden temporary files (.<run_id>.<random>.tmp) never match the *.parquet glob.
CREATE OR REPLACE VIEW llm_calls AS
SELECT *
FROM read_parquet(
    getvariable('parquet_dir') || '/llm_calls/run_date=*/*.parquet',
    hive_partitioning = true,
    hive_types = {'run_date': DATE},
    union_by_name = true
);
