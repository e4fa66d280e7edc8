-- View over the 'runs' table. One row per recorded run: status, timings, models and the per-run summary (calls, tokens, cost, alerts, final scores).
-- Partition column run_date (DATE) comes from the Hive path; union_by_name keeps older
-- partitions readable after a schema migration (missing columns read as NULL).
-- Hidden temporary files (.<run_id>.<random>.tmp) never match the *.parquet glob.
CREATE OR REPLACE VIEW runs AS
SELECT *
FROM read_parquet(
    getvariable('parquet_dir') || '/runs/run_date=*/*.parquet',
    hive_partitioning = true,
    hive_types = {'run_date': DATE},
    union_by_name = true
);
