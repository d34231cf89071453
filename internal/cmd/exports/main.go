// Command exports counts the library's exported names: exported types,
// functions, methods of exported types, constants and variables (struct
// fields and interface methods aside), in every non-test file of the root
// module outside internal/, examples/, benchmarks/ and testdata/. Nested
// modules (a directory with its own go.mod, such as prommetrics) are
// counted on their own: exports DIR. With -v it lists them.
//
//	go run ./internal/cmd/exports      # from the module root
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"log"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

func main() {
	verbose := flag.Bool("v", false, "list the names")
	flag.Parse()
	root := "."
	if flag.NArg() > 0 {
		root = flag.Arg(0)
	}
	names, err := exported(root)
	if err != nil {
		log.Fatal(err)
	}
	if *verbose {
		for _, n := range names {
			fmt.Println(n)
		}
	}
	fmt.Printf("%d exported names\n", len(names))
}

// skipped are the directories whose names are not part of the API.
var skipped = map[string]bool{"internal": true, "examples": true, "benchmarks": true, "testdata": true}

// exported returns "dir Name" (methods as "dir Type.Name") for every
// exported name of the library under root, sorted.
func exported(root string) ([]string, error) {
	var names []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (skipped[d.Name()] || strings.HasPrefix(d.Name(), ".") || isModule(path)) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		dir, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		dir = filepath.ToSlash(dir)
		for _, decl := range f.Decls {
			for _, name := range declared(decl) {
				names = append(names, dir+" "+name)
			}
		}
		return nil
	})
	sort.Strings(names)
	return names, err
}

// isModule reports whether dir holds a go.mod of its own.
func isModule(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "go.mod"))
	return err == nil
}

// declared returns the exported names decl declares.
func declared(decl ast.Decl) []string {
	var out []string
	switch d := decl.(type) {
	case *ast.FuncDecl:
		if !d.Name.IsExported() {
			return nil
		}
		if d.Recv == nil {
			return []string{d.Name.Name}
		}
		recv := d.Recv.List[0].Type
		if star, ok := recv.(*ast.StarExpr); ok {
			recv = star.X
		}
		switch generic := recv.(type) { // Guard[R], Pair[K, V]
		case *ast.IndexExpr:
			recv = generic.X
		case *ast.IndexListExpr:
			recv = generic.X
		}
		if id, ok := recv.(*ast.Ident); ok && id.IsExported() {
			out = append(out, id.Name+"."+d.Name.Name)
		}
	case *ast.GenDecl:
		for _, spec := range d.Specs {
			switch s := spec.(type) {
			case *ast.TypeSpec:
				if s.Name.IsExported() {
					out = append(out, s.Name.Name)
				}
			case *ast.ValueSpec:
				for _, id := range s.Names {
					if id.IsExported() {
						out = append(out, id.Name)
					}
				}
			}
		}
	}
	return out
}
