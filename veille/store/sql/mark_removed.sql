UPDATE documents
SET status = 'removed', updated_at = $now
WHERE id IN (SELECT unnest($ids));
