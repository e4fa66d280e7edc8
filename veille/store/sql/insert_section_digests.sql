-- One row per version of a document; a version already known (re-added, re-dated) keeps its row.
INSERT OR IGNORE INTO section_digests SELECT doc_id, content_hash, digests FROM digest_batch;
