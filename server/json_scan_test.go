package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
)

// TestObjectMembersAsEncodingJSON checks the walk that the field-name
// check reads objects and arrays with against encoding/json's own
// tokens: the same members in the same order, duplicates kept, escaped
// names unescaped, each value exactly its text; for documents written by
// hand (strings holding brackets, quotes and escapes, whitespace
// everywhere, nesting) and for random ones.
func TestObjectMembersAsEncodingJSON(t *testing.T) {
	t.Parallel()
	docs := []string{
		`{}`, ` { } `, `[]`, ` [ ] `, `null`, `"x"`, `12`,
		`{"a":1,"b":"x","a":true}`,
		"{\n\t\"a\" : [1, {\"b\":\"]}\"}, \"\\\"[\"] ,\r\n \"c\":null }",
		`{"\u0041b":"\\","c\"d":{"e":[[],{}],"f":-1.5e3},"g":false}`,
		`[{"a":1},{"b":[1,2,{"c":"}"}]}, 3, "s", null ,true]`,
		`{"nested":{"deep":{"deeper":[{"x":"\"}"}]}},"z":"é\u2028"}`,
	}
	rng := rand.New(rand.NewPCG(7, 7))
	for range 300 {
		b, err := json.Marshal(randomJSON(rng, 3))
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, string(b))
	}
	for _, doc := range docs {
		data := []byte(doc)
		wantM, wantObj := referenceMembers(data)
		gotM, gotObj := objectMembers(data)
		if gotObj != wantObj || !reflect.DeepEqual(normalize(gotM), normalize(wantM)) {
			t.Errorf("members of %s:\n%q %v\nwant\n%q %v", doc, gotM, gotObj, wantM, wantObj)
		}
		var wantItems []json.RawMessage
		wantArr := json.Unmarshal(data, &wantItems) == nil && wantItems != nil
		gotItems, gotArr := arrayItems(data)
		if gotArr != wantArr || len(gotItems) != len(wantItems) {
			t.Errorf("items of %s: %q %v, want %q %v", doc, gotItems, gotArr, wantItems, wantArr)
			continue
		}
		for i := range gotItems {
			if !bytes.Equal(bytes.TrimSpace(gotItems[i]), bytes.TrimSpace(wantItems[i])) {
				t.Errorf("item %d of %s: %s, want %s", i, doc, gotItems[i], wantItems[i])
			}
		}
	}
	// Text that is not JSON (the walk never gets it) ends the walk
	// without a panic.
	for _, bad := range []string{`{"a`, `{"a":`, `{"a":[1,`, `[{"`, `{"a":"\`, `[`, `{`, `{"a":1`} {
		objectMembers([]byte(bad))
		arrayItems([]byte(bad))
	}
}

// referenceMembers lists the members of an object with encoding/json's
// tokens.
func referenceMembers(data []byte) ([]member, bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, false
	}
	var out []member
	for dec.More() {
		tok, _ := dec.Token()
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			panic(err)
		}
		out = append(out, member{tok.(string), raw})
	}
	return out, true
}

func normalize(ms []member) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.name+"="+string(bytes.TrimSpace(m.raw)))
	}
	return out
}

func randomJSON(rng *rand.Rand, depth int) any {
	k := rng.IntN(7)
	if depth == 0 {
		k = rng.IntN(4)
	}
	strs := []string{"", "a", `"`, `\`, "}", "]", "{[", "é", "\u2028", "x,y:z"}
	switch k {
	case 0:
		return strs[rng.IntN(len(strs))]
	case 1:
		return rng.Float64()*2000 - 1000
	case 2:
		return rng.IntN(2) == 0
	case 3:
		return nil
	case 4, 5:
		m := map[string]any{}
		for i := range rng.IntN(5) {
			m[fmt.Sprint(strs[rng.IntN(len(strs))], i)] = randomJSON(rng, depth-1)
		}
		return m
	default:
		var s []any
		for range rng.IntN(5) {
			s = append(s, randomJSON(rng, depth-1))
		}
		return s
	}
}
