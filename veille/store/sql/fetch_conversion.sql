SELECT format, text, title, date, author, origins FROM conversions WHERE content_hash = $hash;
