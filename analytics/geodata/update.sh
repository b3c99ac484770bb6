#!/bin/sh
# update.sh refreshes the country database linkbolt embeds: it downloads a
# pinned version of the npm package @ip-location-db/geo-whois-asn-country-mmdb
# from the npm registry, checks the tarball against the sha512 integrity the
# registry publishes for it, and writes country.mmdb and country.json (the
# package, version, licence, integrity and date of the data) beside this
# script. No npm, node or account is needed: curl, tar, openssl (or
# sha512sum) and base64.
#
#   analytics/geodata/update.sh                  # the version pinned below
#   analytics/geodata/update.sh 2.3.2026061719   # another version
#
# To move to a newer version: look it up with
#   npm view @ip-location-db/geo-whois-asn-country-mmdb version dist.integrity
# and pass it (the integrity is then read from the registry's record of
# that version and printed; pin both here once checked).
set -eu

PACKAGE=@ip-location-db/geo-whois-asn-country-mmdb
VERSION=${1:-2.3.2026061719}
# dist.integrity of the pinned version; a version given on the command
# line is checked against what the registry says for it.
PINNED_VERSION=2.3.2026061719
PINNED_INTEGRITY=sha512-xemBDNQl4mCYDuVbqe3jKGKsVDykZGkfvebhtOh/3VGLadq8vsp7t7ontpMUt3hH7sAGT0eLDyJ99SV+0waxZg==
REGISTRY=${NPM_REGISTRY:-https://registry.npmjs.org}
FILE=geo-whois-asn-country.mmdb

dir=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

name=${PACKAGE#*/}
tarball="$REGISTRY/$PACKAGE/-/$name-$VERSION.tgz"
if [ "$VERSION" = "$PINNED_VERSION" ]; then
	integrity=$PINNED_INTEGRITY
else
	curl -fsSL "$REGISTRY/$PACKAGE/$VERSION" -o "$tmp/meta.json"
	integrity=$(sed -n 's/.*"integrity":"\(sha512-[^"]*\)".*/\1/p' "$tmp/meta.json")
	[ -n "$integrity" ] || { echo "update.sh: the registry gives no sha512 integrity for $PACKAGE@$VERSION" >&2; exit 1; }
	echo "update.sh: $PACKAGE@$VERSION has integrity $integrity (pin it in update.sh)"
fi

echo "update.sh: downloading $tarball"
curl -fsSL "$tarball" -o "$tmp/package.tgz"
if command -v openssl >/dev/null 2>&1; then
	got=sha512-$(openssl dgst -sha512 -binary "$tmp/package.tgz" | base64 | tr -d '\n')
else
	got=sha512-$(sha512sum "$tmp/package.tgz" | cut -d' ' -f1 | xxd -r -p | base64 | tr -d '\n')
fi
if [ "$got" != "$integrity" ]; then
	echo "update.sh: integrity mismatch for $tarball:" >&2
	echo "  want $integrity" >&2
	echo "  got  $got" >&2
	exit 1
fi
tar -xzf "$tmp/package.tgz" -C "$tmp" package/package.json "package/$FILE"
license=$(sed -n 's/.*"license": *"\([^"]*\)".*/\1/p' "$tmp/package/package.json")
got_version=$(sed -n 's/.*"version": *"\([^"]*\)".*/\1/p' "$tmp/package/package.json")
[ "$got_version" = "$VERSION" ] || { echo "update.sh: the tarball is version $got_version, not $VERSION" >&2; exit 1; }
# The version's last part is the time the data was built: YYYYMMDDHH.
stamp=${VERSION##*.}
date=$(echo "$stamp" | sed -n 's/^\([0-9]\{4\}\)\([0-9]\{2\}\)\([0-9]\{2\}\)[0-9]*$/\1-\2-\3/p')
[ -n "$date" ] || { echo "update.sh: cannot read the data's date from version $VERSION" >&2; exit 1; }

cp "$tmp/package/$FILE" "$dir/country.mmdb.tmp"
mv "$dir/country.mmdb.tmp" "$dir/country.mmdb"
cat >"$dir/country.json.tmp" <<JSON
{
  "source": "$PACKAGE",
  "version": "$VERSION",
  "license": "$license",
  "attribution": "Contains data of the regional internet registries, published by the NRO (nro.net) under CC BY 4.0",
  "date": "$date",
  "file": "$FILE",
  "integrity": "$integrity"
}
JSON
mv "$dir/country.json.tmp" "$dir/country.json"
echo "update.sh: wrote $dir/country.mmdb ($(wc -c <"$dir/country.mmdb") bytes) and country.json ($PACKAGE@$VERSION, $license, data of $date)"
