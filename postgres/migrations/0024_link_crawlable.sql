-- A crawlable link is allowed to search engines by /robots.txt of its
-- domain (link.Link.Crawlable); every other short URL is disallowed.
ALTER TABLE links ADD COLUMN IF NOT EXISTS crawlable boolean NOT NULL DEFAULT false;
CREATE INDEX IF NOT EXISTS links_crawlable ON links (domain, alias) WHERE crawlable;
