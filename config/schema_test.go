package config

import (
	"encoding/json"
	"maps"
	"os"
	"slices"
	"testing"
)

// TestSchemaHasTheParsersFields: schema.json, for editors, names exactly
// the fields the parser reads, at every level.
func TestSchemaHasTheParsersFields(t *testing.T) {
	data, err := os.ReadFile("schema.json")
	if err != nil {
		t.Fatal(err)
	}
	type object struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	var schema struct {
		object
		Defs map[string]object `json:"$defs"`
	}
	if err := json.Unmarshal(data, &schema); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		what string
		obj  object
		want []string
	}{
		{"file", schema.object, fileFields},
		{"rule", schema.Defs["rule"], ruleFields},
		{"stack", schema.Defs["stack"], stackFields},
		{"algorithm", schema.Defs["algorithm"], kindFields},
	} {
		got := slices.Sorted(maps.Keys(tc.obj.Properties))
		if want := slices.Sorted(slices.Values(tc.want)); !slices.Equal(got, want) {
			t.Errorf("%s: schema has %v, the parser reads %v", tc.what, got, want)
		}
	}
}
