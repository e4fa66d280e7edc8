-- View over the 'grader_scores' table. One row per grader result: target (final or round-N), grader name and version, score, judge model, details.
-- Partition column run_date (DATE) comes from the Hive path; union_by_name keeps older
-- partitions readable after a schema migration (missing columns read as NULL).
-- Hidden temporary files (.<run_id>.<random>.tmp) never match the *.parquet glob.
CREATE OR REPLACE VIEW grader_scores AS
SELECT *
FROM read_parquet(
    getvariable('parquet_dir') || '/grader_scores/run_date=*/*.parquet',
    hive_partitioning = true,
    hive_types = {'run_date': DATE},
    union_by_name = true
);
