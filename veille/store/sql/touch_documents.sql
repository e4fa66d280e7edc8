-- Same content, new file metadata (touched or renamed file): refresh path/size/mtime, not updated_at.
UPDATE documents
SET path = touch_batch.path, file_size = touch_batch.file_size, file_mtime_ns = touch_batch.file_mtime_ns
FROM touch_batch
WHERE documents.id = touch_batch.id;
