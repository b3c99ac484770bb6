-- API keys limited to some kinds of records (link.APIKey.Resources):
-- NULL is every kind, as keys had before. An instance of an earlier
-- release ignores the column, and lets such a key reach everything its
-- scope allows: create limited keys once every instance runs a release
-- that has it.
ALTER TABLE keys ADD COLUMN resources text[];
