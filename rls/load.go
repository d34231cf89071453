package rls

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/seed-bff0c9e1/ratelimit"
)

// LoadDir parses every .yaml and .yml file directly in dir, one domain
// each, as the reference server reads its runtime directory
// ($RUNTIME_ROOT/$RUNTIME_SUBDIRECTORY/config). With ignoreDotfiles,
// files whose names start with a dot are skipped (the reference's
// RUNTIME_IGNOREDOTFILES). Sub-directories are not read, so a Kubernetes
// ConfigMap volume's "..data" copy of each file is never loaded a second
// time. Every file's problems are returned, joined; two files of one
// domain are an error wrapping ratelimit.ErrConfig.
func LoadDir(dir string, ignoreDotfiles bool) ([]*Config, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ratelimit.ErrConfig, err)
	}
	var configs []*Config
	var errs []error
	from := map[string]string{} // domain -> file
	for _, e := range entries {
		name := e.Name()
		ext := filepath.Ext(name)
		if ext != ".yaml" && ext != ".yml" || ignoreDotfiles && strings.HasPrefix(name, ".") {
			continue
		}
		path := filepath.Join(dir, name)
		if st, err := os.Stat(path); err != nil || st.IsDir() {
			continue // a dangling link, or a directory named like a file
		}
		data, err := os.ReadFile(path)
		if err != nil {
			errs = append(errs, fmt.Errorf("%w: %w", ratelimit.ErrConfig, err))
			continue
		}
		c, err := Parse(path, data)
		switch {
		case err != nil:
			errs = append(errs, err)
		case from[c.Domain] != "":
			errs = append(errs, fmt.Errorf("%w: %s: domain %q is configured in %s already", ratelimit.ErrConfig, path, c.Domain, from[c.Domain]))
		default:
			from[c.Domain] = path
			configs = append(configs, c)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if len(configs) == 0 {
		return nil, fmt.Errorf("%w: no .yaml file in %s", ratelimit.ErrConfig, dir)
	}
	slices.SortFunc(configs, func(a, b *Config) int { return strings.Compare(a.Domain, b.Domain) })
	return configs, nil
}
