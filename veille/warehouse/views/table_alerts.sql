-- View over the 'alerts' table. One row per alert raised by a run (stable code, severity, stage, message, subject).
-- Partition column run_date (DATE) comes from the Hive path; union_by_name keeps older
-- partitions readable after a schema migration (missing columns read as NULL).
-- Hidden temporary files (.<run_id>.<random>.tmp) never match the *.parquet glob.
CREATE OR REPLACE VIEW alerts AS
SELECT *
FROM read_parquet(
    getvariable('parquet_dir') || '/alerts/run_date=*/*.parquet',
    hive_partitioning = true,
    hive_types = {'run_date': DATE},
    union_by_name = true
);
