-- Where a link sends visitors on iOS (and iPadOS) and on Android instead
-- of its destination (link.Link.IOSURL, AndroidURL); '', the default, is
-- the destination.
ALTER TABLE links ADD COLUMN IF NOT EXISTS ios_url text NOT NULL DEFAULT '';
ALTER TABLE links ADD COLUMN IF NOT EXISTS android_url text NOT NULL DEFAULT '';
