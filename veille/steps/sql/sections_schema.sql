-- Sections kept across nights (veille/steps/sections.py): a validated section per digest of its inputs,
-- the conclusions (synthesis, ledger, uncertainties, recommendation) per digest of the request and rules.
CREATE TABLE IF NOT EXISTS sections (key TEXT PRIMARY KEY, section TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS conclusions (key TEXT PRIMARY KEY, conclusions TEXT NOT NULL);
