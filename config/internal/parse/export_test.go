package parse

// The parser's tables, for the schema's tests: they are in package
// parse_test, as they load files with package config, which imports this
// package.
var (
	FileFields  = fileFields
	RuleFields  = ruleFields
	StackFields = stackFields
	KindFields  = kindFields
	Units       = units
)

// Kind is an algorithm field as the schema's tests read it: its name,
// whether its value starts with a rate, and the words it takes (true:
// with a value).
type Kind struct {
	Field string
	Rate  bool
	Words map[string]bool
}

// Kinds are the algorithm fields, in the order of kinds.
var Kinds = func() []Kind {
	out := make([]Kind, len(kinds))
	for i, k := range kinds {
		out[i] = Kind{Field: k.field, Rate: k.rate, Words: k.words}
	}
	return out
}()
