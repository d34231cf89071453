package parse

import (
	"fmt"

	"github.com/seed-bff0c9e1/ratelimit"
)

// Problem is one problem of a rules file: where it is (File, and Line and
// Column, from 1), which field (a path such as "rules[0].key", or
// "(syntax)"), and what is wrong, as "found ...; allowed: ..." or
// "found ...; required: ...". Load, Reload and Check return every
// problem of a file joined in one error, in the order of their lines:
// errors.As finds the first, Problems lists them all, for a program (an
// editor, a CI annotation) that places them without reading the text.
type Problem struct {
	File    string `json:"file"`
	Line    int    `json:"line"`
	Column  int    `json:"column"`
	Field   string `json:"field"`
	Message string `json:"message"`
}

// Error is the problem as one line: "file:line:column: field: message".
func (e *Problem) Error() string {
	return fmt.Sprintf("%s:%d:%d: %s: %s", e.File, e.Line, e.Column, e.Field, e.Message)
}

// Unwrap makes every problem of a file a configuration error
// (ratelimit.ErrConfig).
func (e *Problem) Unwrap() error { return ratelimit.ErrConfig }
