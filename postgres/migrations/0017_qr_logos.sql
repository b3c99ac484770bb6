-- A saved QR code design may have a logo drawn in the centre of the code:
-- a PNG linkbolt re-encoded from the upload (at most 512 pixels a side),
-- and its hex SHA-256, which the design's answers and the image's ETag
-- carry. Listing designs reads logo_digest only.
ALTER TABLE qr_codes
	ADD COLUMN logo bytea,
	ADD COLUMN logo_digest text NOT NULL DEFAULT '',
	ADD CONSTRAINT qr_codes_logo_digest CHECK ((logo IS NULL) = (logo_digest = ''));
