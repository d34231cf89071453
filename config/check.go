package config

import (
	"github.com/seed-bff0c9e1/ratelimit/config/internal/parse"
	"github.com/seed-bff0c9e1/ratelimit/internal/yamlnode"
)

// Check reads the rules file at path and validates it as Load does, with
// funcs the names the program registers with WithKeyFunc. It returns the
// rules and stacks as understood, one line each, for a CI pipeline or a
// reviewer; or every problem of the file (see Load).
func Check(path string, funcs ...string) (string, error) {
	data, err := yamlnode.ReadFile(path)
	if err != nil {
		return "", err
	}
	f, err := parse.Read(path, data, funcs)
	if err != nil {
		return "", err
	}
	return f.String(), nil
}
