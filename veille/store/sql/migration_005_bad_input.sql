-- Corpus database, version 5 (issue 39 item 6): an HTML file's undeclared charset is detected and binary
-- content is refused whatever the extension (veille/corpus/sniff.py), and no control, format, bidi or tag
-- character stays in a title (veille/corpus/invisible.py). What the previous rules stored is read again
-- once: HTML files (a Latin-1 page stored garbled, random bytes stored as text) and documents whose title
-- holds such a character. No size: the stat shortcut misses, the next ingestion re-reads them; no hash
-- ('stale', never a SHA-256): the same bytes count as updated, so the row is written again; their
-- conversions are dropped so they are converted again. Other documents are left as they are.
UPDATE documents SET file_size = NULL, content_hash = 'stale'
WHERE format = 'html'
   OR regexp_matches(title, '[\x{0}-\x{1F}\x{7F}-\x{9F}\x{AD}\x{61C}\x{180E}\x{200B}-\x{200F}\x{202A}-\x{202E}\x{2060}-\x{206F}\x{FEFF}\x{FFF9}-\x{FFFB}\x{E0000}-\x{E007F}]');
DELETE FROM conversions WHERE format = 'html';
