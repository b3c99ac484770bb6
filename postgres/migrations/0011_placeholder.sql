-- Placeholder of the migration 0011 written elsewhere.
SELECT 1;
