#!/bin/sh
# vendor.sh refreshes the dashboard's third-party ES modules from the npm
# registry and writes assets/vendor/SHA256SUMS, which a Go test checks.
# Change a version here, run ./dashboard/vendor.sh, and commit the result.
set -eu
HTM_VERSION=3.1.1
UPLOT_VERSION=1.6.32

cd "$(dirname "$0")/assets/vendor"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fetch() { # package version
	curl -fsSL "https://registry.npmjs.org/$1/-/$1-$2.tgz" -o "$tmp/$1.tgz"
	mkdir -p "$tmp/$1"
	tar -xzf "$tmp/$1.tgz" -C "$tmp/$1"
}

fetch htm "$HTM_VERSION"
cp "$tmp/htm/package/preact/standalone.module.js" htm-preact-standalone.js
cp "$tmp/htm/package/LICENSE" LICENSE.htm
fetch uplot "$UPLOT_VERSION"
cp "$tmp/uplot/package/dist/uPlot.esm.js" uPlot.esm.js
cp "$tmp/uplot/package/dist/uPlot.min.css" uPlot.min.css
cp "$tmp/uplot/package/LICENSE" LICENSE.uplot

{
	echo "# htm $HTM_VERSION (bundles Preact), uplot $UPLOT_VERSION, from registry.npmjs.org"
	sha256sum htm-preact-standalone.js uPlot.esm.js uPlot.min.css LICENSE.htm LICENSE.uplot
} > SHA256SUMS
