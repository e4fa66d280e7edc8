-- runs: one row per flow run, its last attempt (see run_attempts for every attempt). A run
-- without a Prefect flow run is its own flow run (run_key = run_id).
CREATE OR REPLACE VIEW runs AS
SELECT * FROM run_attempts WHERE last_flow_run_attempt;
