// Command modcheck fails when a module of this repository could not be
// used from outside it: a go.mod that requires a module at the zero
// pseudo-version v0.0.0-00010101000000-000000000000 (no such version can
// be downloaded), or a Go file of one module that imports another
// module's internal/ packages (which Go refuses outside the repository,
// and which may change under it). It also fails when code the library
// runs imports a test harness: a non-test file outside the harness
// directories (see harnessDirs) that imports a package under a module's
// internal/testkit/. make test runs it from the module root.
//
//	go run ./internal/cmd/modcheck [DIR]
package main

import (
	"flag"
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"log"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

func main() {
	flag.Parse()
	root := "."
	if flag.NArg() > 0 {
		root = flag.Arg(0)
	}
	problems, err := check(root)
	if err != nil {
		log.Fatal(err)
	}
	for _, p := range problems {
		fmt.Println(p)
	}
	if len(problems) > 0 {
		os.Exit(1)
	}
}

// zeroVersion is the version go mod edit writes for a requirement that
// only a replace can satisfy.
const zeroVersion = "v0.0.0-00010101000000-000000000000"

// module is a go.mod's directory and module path.
type module struct{ dir, path string }

// check returns the problems of the modules under root, sorted.
func check(root string) ([]string, error) {
	mods, err := modules(root)
	if err != nil {
		return nil, err
	}
	var problems []string
	for _, m := range mods {
		data, err := os.ReadFile(filepath.Join(m.dir, "go.mod"))
		if err != nil {
			return nil, err
		}
		for i, line := range strings.Split(string(data), "\n") {
			if strings.Contains(line, zeroVersion) {
				fields := strings.Fields(strings.TrimPrefix(strings.TrimSpace(line), "require "))
				problems = append(problems, fmt.Sprintf("%s:%d: requires %s at %s, which no one can download",
					filepath.Join(m.dir, "go.mod"), i+1, fields[0], zeroVersion))
			}
		}
	}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		own := owner(mods, path)
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			i := strings.Index(p+"/", "/internal/")
			if i < 0 {
				continue
			}
			to := ownerOfImport(mods, p)
			if to == nil {
				continue
			}
			if to != own {
				problems = append(problems, fmt.Sprintf("%s: imports %s, internal to module %s", path, p, to.path))
			}
			if isHarness(to, p) && !strings.HasSuffix(path, "_test.go") && !mayImportHarness(to, path) {
				problems = append(problems, fmt.Sprintf("%s: imports %s, a test harness, outside a test", path, p))
			}
		}
		return nil
	})
	sort.Strings(problems)
	return problems, err
}

// harnessDirs are the directories, relative to a module's root, whose
// non-test files may import the module's test harnesses: the harnesses
// themselves, the commands, the examples and the benchmarks.
var harnessDirs = []string{"internal/testkit", "internal/cmd", "examples", "benchmarks"}

// isHarness reports whether the import path imp names a test harness of
// module m: a package under its internal/testkit/.
func isHarness(m *module, imp string) bool {
	return strings.HasPrefix(imp+"/", m.path+"/internal/testkit/")
}

// mayImportHarness reports whether the file at path lies in one of the
// harnessDirs of module m.
func mayImportHarness(m *module, path string) bool {
	rel, err := filepath.Rel(m.dir, path)
	if err != nil {
		return false
	}
	rel = filepath.ToSlash(rel)
	for _, d := range harnessDirs {
		if strings.HasPrefix(rel, d+"/") {
			return true
		}
	}
	return false
}

// modules lists the modules under root: every directory with a go.mod.
func modules(root string) ([]*module, error) {
	var mods []*module
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.Name() != "go.mod" {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, line := range strings.Split(string(data), "\n") {
			if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
				mods = append(mods, &module{dir: filepath.Dir(path), path: strings.Trim(strings.TrimSpace(rest), `"`)})
			}
		}
		return nil
	})
	return mods, err
}

// owner is the module whose directory holds path: the deepest.
func owner(mods []*module, path string) *module {
	var best *module
	for _, m := range mods {
		if rel, err := filepath.Rel(m.dir, path); err == nil && !strings.HasPrefix(rel, "..") &&
			(best == nil || len(m.dir) > len(best.dir)) {
			best = m
		}
	}
	return best
}

// ownerOfImport is the module an import path belongs to: the longest
// module path it starts with, or nil for a module outside the repository.
func ownerOfImport(mods []*module, imp string) *module {
	var best *module
	for _, m := range mods {
		if (imp == m.path || strings.HasPrefix(imp, m.path+"/")) && (best == nil || len(m.path) > len(best.path)) {
			best = m
		}
	}
	return best
}
