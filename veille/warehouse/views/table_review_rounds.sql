-- View over the 'review_rounds' table. One row per critic round of the review loop: scores, mean, validity, instructions, draft.
-- Partition column run_date (DATE) comes from the Hive path; union_by_name keeps older
-- partitions readable after a schema migration (missing columns read as NULL).
-- Hidden temporary files (.<run_id>.<random>.tmp) never match the *.parquet glob.
CREATE OR REPLACE VIEW review_rounds AS
SELECT *
FROM read_parquet(
    getvariable('parquet_dir') || '/review_rounds/run_date=*/*.parquet',
    hive_partitioning = true,
    hive_types = {'run_date': DATE},
    union_by_name = true
);
