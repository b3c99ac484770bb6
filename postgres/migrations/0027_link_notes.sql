-- A link's note (link.LinkLimits.Note): what the workspace's people write
-- about it for each other, several lines, at most 2,000 characters. A
-- search reads it through links.search_text, which holds the note's lines
-- after the other fields; '' for the links made before, whose search text
-- stays what it was.
ALTER TABLE links ADD COLUMN IF NOT EXISTS note text NOT NULL DEFAULT '';
