package config

import "github.com/seed-bff0c9e1/ratelimit/config/internal/parse"

// Problem is one problem of a rules file: where it is (File, and Line and
// Column, from 1), which field (a path such as "rules[0].key", or
// "(syntax)"), and what is wrong, as "found ...; allowed: ..." or
// "found ...; required: ...". Load, Reload and Check return every
// problem of a file joined in one error, in the order of their lines:
// errors.As finds the first, Problems lists them all, for a program (an
// editor, a CI annotation) that places them without reading the text.
// (*Problem).Error is the problem as one line,
// "file:line:column: field: message", and every problem wraps
// ratelimit.ErrConfig.
type Problem = parse.Problem

// Problems is every Problem in err's tree (an error of Load, Reload or
// Check), in order; nil when it has none (a file that could not be read).
func Problems(err error) []*Problem {
	switch e := err.(type) {
	case *Problem:
		return []*Problem{e}
	case interface{ Unwrap() []error }:
		var all []*Problem
		for _, inner := range e.Unwrap() {
			all = append(all, Problems(inner)...)
		}
		return all
	case interface{ Unwrap() error }:
		return Problems(e.Unwrap())
	}
	return nil
}
