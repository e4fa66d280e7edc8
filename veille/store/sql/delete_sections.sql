DELETE FROM sections WHERE doc_id IN (SELECT unnest($ids));
