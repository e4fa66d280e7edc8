-- View over the 'sources' table. The report's numbered sources: corpus documents and web pages (kind), with URL and domain of a web page.
-- Partition column run_date (DATE) comes from the Hive path; union_by_name keeps older
-- partitions readable after a schema migration (missing columns read as NULL).
-- Hidden temporary files (.<run_id>.<random>.tmp) never match the *.parquet glob.
CREATE OR REPLACE VIEW sources AS
SELECT *
FROM read_parquet(
    getvariable('parquet_dir') || '/sources/run_date=*/*.parquet',
    hive_partitioning = true,
    hive_types = {'run_date': DATE},
    union_by_name = true
);
