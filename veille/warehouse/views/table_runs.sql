-- View over the 'runs' table as written: one row per recorded run folder, i.e. per attempt of a
-- flow run (a Retry from the Prefect UI is the same flow run, a new attempt, a new run folder).
-- The views `run_attempts` (every attempt, numbered) and `runs` (the last attempt of each flow
-- run) read it. Partition column run_date (DATE) comes from the Hive path; union_by_name keeps
-- older partitions readable after a schema migration (missing columns read as NULL).
-- Hidden temporary files (.<run_id>.<random>.tmp) never match the *.parquet glob.
CREATE OR REPLACE VIEW run_records AS
SELECT *
FROM read_parquet(
    getvariable('parquet_dir') || '/runs/run_date=*/*.parquet',
    hive_partitioning = true,
    hive_types = {'run_date': DATE},
    union_by_name = true
);
