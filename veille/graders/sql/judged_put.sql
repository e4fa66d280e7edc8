INSERT OR REPLACE INTO judged VALUES (?, ?, ?, ?)
