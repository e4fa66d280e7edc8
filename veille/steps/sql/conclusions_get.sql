SELECT conclusions FROM conclusions WHERE key = ?
