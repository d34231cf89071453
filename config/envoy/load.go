package envoy

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/seed-bff0c9e1/ratelimit"
	"github.com/seed-bff0c9e1/ratelimit/internal/yamlnode"
)

// LoadDir parses every .yaml and .yml file directly in dir, one domain
// each, as the reference server reads its runtime directory
// ($RUNTIME_ROOT/$RUNTIME_SUBDIRECTORY/config). With ignoreDotfiles,
// files whose names start with a dot are skipped (the reference's
// RUNTIME_IGNOREDOTFILES). Sub-directories are not read, so a Kubernetes
// ConfigMap volume's "..data" copy of each file is never loaded a second
// time. A file of more than 4 MiB is refused. Every
// file's problems are returned, joined; two files of one domain are an
// error wrapping ratelimit.ErrConfig.
func LoadDir(dir string, ignoreDotfiles bool) ([]*Config, error) {
	return loadDir(dir, ignoreDotfiles, false)
}

// LoadDirMerged is LoadDir with the files of one domain merged into one
// Config, as the reference server's MERGE_DOMAIN_CONFIG=true merges
// them: each file's top-level descriptors are added whole, in the order
// of the files' names; a top-level descriptor of one key and value in
// two files is an error at the second, naming the first. A replaces
// entry may name a limit of another file of its domain. Limits are named
// over the merged domain, so a descriptor's rule is the one it would
// have with the domain in one file, whichever file gives it.
func LoadDirMerged(dir string, ignoreDotfiles bool) ([]*Config, error) {
	return loadDir(dir, ignoreDotfiles, true)
}

func loadDir(dir string, ignoreDotfiles, merge bool) ([]*Config, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ratelimit.ErrConfig, err)
	}
	var configs []*Config
	var errs []error
	from := map[string]*Config{} // domain -> its first file's
	file := map[*Config]string{}
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
		data, err := yamlnode.ReadFile(path)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		c, err := parse(path, data)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		switch first := from[c.Domain]; {
		case first != nil && merge:
			if err := first.merge(c); err != nil {
				errs = append(errs, err)
			}
		case first != nil:
			errs = append(errs, fmt.Errorf("%w: %s: domain %q is configured in %s already (MERGE_DOMAIN_CONFIG=true merges them)", ratelimit.ErrConfig, path, c.Domain, file[first]))
		default:
			from[c.Domain], file[c] = c, path
			configs = append(configs, c)
		}
	}
	for _, c := range configs {
		if err := c.finish(); err != nil {
			errs = append(errs, err)
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
