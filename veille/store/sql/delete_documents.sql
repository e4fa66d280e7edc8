-- Changed or re-added documents are deleted then re-inserted (in the same transaction): DuckDB keeps far
-- less memory for delete+insert than for an in-place update of large text columns.
DELETE FROM documents WHERE id IN (SELECT unnest($ids));
