SELECT key, section FROM sections WHERE key IN ({marks})
