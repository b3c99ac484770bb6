package server

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/julienschmidt/httprouter"
	"go.yaml.in/yaml/v3"
)

// OpenAPIYAML is the hand-written OpenAPI 3 document of the API: the
// reference clients rely on, checked against real answers by the tests.
//
//go:embed openapi.yaml
var OpenAPIYAML []byte

// openAPIJSON is the document served at /v1/openapi.json.
var openAPIJSON = mustJSON(OpenAPIYAML)

func mustJSON(y []byte) []byte {
	var doc any
	if err := yaml.Unmarshal(y, &doc); err != nil {
		panic(fmt.Sprintf("openapi.yaml: %v", err))
	}
	b, err := json.Marshal(stringKeys(doc))
	if err != nil {
		panic(fmt.Sprintf("openapi.yaml: %v", err))
	}
	return b
}

func serveOpenAPI(w http.ResponseWriter, _ *http.Request, _ httprouter.Params) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "public, max-age=300")
	_, _ = w.Write(openAPIJSON)
}

// stringKeys turns the maps YAML decodes with non-string keys (such as the
// status codes 200 or 404 written unquoted) into maps JSON can hold.
func stringKeys(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			t[k] = stringKeys(e)
		}
		return t
	case map[any]any:
		m := make(map[string]any, len(t))
		for k, e := range t {
			m[fmt.Sprint(k)] = stringKeys(e)
		}
		return m
	case []any:
		for i, e := range t {
			t[i] = stringKeys(e)
		}
	}
	return v
}
