-- The key service's migration (0004_keys.sql) takes this version; this
-- file only keeps the versions contiguous until it comes.
SELECT 1;
