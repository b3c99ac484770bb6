// Package geodata is the country database linkbolt embeds: ip-location-db's
// geo-whois-asn-country in MaxMind DB format (CC0-1.0; built from the
// regional internet registries' data, CC BY 4.0 by the NRO), with the
// record of where it came from. update.sh refreshes both files from the
// npm registry; LICENSE.md is the licence.
package geodata

import (
	_ "embed"
	"encoding/json"
	"fmt"
)

// MMDB is the database, in MaxMind DB format: each network's record holds
// its country at country_code.
//
//go:embed country.mmdb
var MMDB []byte

//go:embed country.json
var infoJSON []byte

// Info records where MMDB came from; update.sh writes it.
type Info struct {
	Source      string `json:"source"`  // the npm package
	Version     string `json:"version"` // the package's version
	License     string `json:"license"` // the package's licence (SPDX)
	Attribution string `json:"attribution"`
	Date        string `json:"date"` // the day the data was built, YYYY-MM-DD
	File        string `json:"file"` // the package's file MMDB is
	Integrity   string `json:"integrity"`
}

// Read returns the record of MMDB.
func Read() Info {
	var i Info
	if err := json.Unmarshal(infoJSON, &i); err != nil {
		panic(fmt.Sprintf("geodata: country.json: %v", err))
	}
	return i
}
