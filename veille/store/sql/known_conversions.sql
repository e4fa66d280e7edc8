SELECT content_hash FROM conversions;
