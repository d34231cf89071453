package algo_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The module root, seen from this package's directory.
const moduleRoot = "../.."

// confinedDirs are the directories (relative to the module root) whose
// code may switch on and assert the algorithms' types: the algorithms, the
// table, and the Go models.
var confinedDirs = []string{"algorithms", "internal/algo", "internal/model"}

// algorithmTypes are the algorithm types package algorithms declares in
// dir: those with a policy method, which only an algorithm has.
func algorithmTypes(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(dir, e.Name()), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv == nil || fd.Name.Name != "policy" {
				continue
			}
			if id, ok := fd.Recv.List[0].Type.(*ast.Ident); ok {
				names = append(names, id.Name)
			}
		}
	}
	slices.Sort(names)
	return names
}

// typeUses lists where a non-test file of the module at root, outside
// confinedDirs, nested modules and testdata, switches on or asserts one
// of types, package algorithms' algorithm types: "path:line: the type".
func typeUses(root string, types []string) ([]string, error) {
	modPath, err := modulePath(root)
	if err != nil {
		return nil, err
	}
	var uses []string
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == "." {
				return nil
			}
			if strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || slices.Contains(confinedDirs, rel) {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir // a module of its own
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		found, err := fileTypeUses(path, modPath+"/algorithms", types)
		for _, f := range found {
			uses = append(uses, rel+":"+f)
		}
		return err
	})
	return uses, err
}

// modulePath is the module path in root's go.mod.
func modulePath(root string) (string, error) {
	data, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if p, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
			return strings.TrimSpace(p), nil
		}
	}
	return "", fmt.Errorf("%s: no module line", filepath.Join(root, "go.mod"))
}

// fileTypeUses lists the type assertions and type switch cases of the
// file at path on one of types of the package imported from algPath:
// "line: name.Type".
func fileTypeUses(path, algPath string, types []string) ([]string, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	name := ""
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == algPath {
			name = "algorithms"
			if imp.Name != nil {
				name = imp.Name.Name
			}
		}
	}
	if name == "" {
		return nil, nil
	}
	var uses []string
	use := func(e ast.Expr) {
		if star, ok := e.(*ast.StarExpr); ok {
			e = star.X
		}
		sel, ok := e.(*ast.SelectorExpr)
		if !ok {
			return
		}
		if x, ok := sel.X.(*ast.Ident); ok && x.Name == name && slices.Contains(types, sel.Sel.Name) {
			uses = append(uses, fmt.Sprintf("%d: %s.%s", fset.Position(e.Pos()).Line, name, sel.Sel.Name))
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.TypeAssertExpr:
			if n.Type != nil {
				use(n.Type)
			}
		case *ast.TypeSwitchStmt:
			for _, c := range n.Body.List {
				for _, e := range c.(*ast.CaseClause).List {
					use(e)
				}
			}
		}
		return true
	})
	return uses, nil
}

// No non-test file outside package algorithms, this table and the Go
// models switches on or asserts an algorithm's type: the code that treats
// algorithms alike reads their Facts.
func TestAlgorithmTypesStayInTheTable(t *testing.T) {
	types := algorithmTypes(t, filepath.Join(moduleRoot, "algorithms"))
	if len(types) == 0 {
		t.Fatal("no algorithm types found")
	}
	uses, err := typeUses(moduleRoot, types)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range uses {
		t.Errorf("%s: ask internal/algo's Facts instead", u)
	}
}

// The check finds assertions and type switch cases, on a value or a
// pointer, under any import name, and leaves alone test files, the
// confined directories, nested modules, testdata and other types.
func TestTypeUsesFinds(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		"go.mod": "module example.com/m\n",
		"a/a.go": `package a

import alg "example.com/m/algorithms"

func F(x any) bool {
	_, ok := x.(alg.GCRA)
	switch x.(type) {
	case *alg.Queue, alg.Policy:
	}
	_, _ = x.(alg.Policy)
	return ok
}
`,
		"a/a_test.go":             "package a\n\nimport \"example.com/m/algorithms\"\n\nvar _, _ = any(nil).(algorithms.GCRA)\n",
		"internal/model/m.go":     "package model\n\nimport \"example.com/m/algorithms\"\n\nvar _, _ = any(nil).(algorithms.GCRA)\n",
		"a/testdata/t.go":         "package t\n\nimport \"example.com/m/algorithms\"\n\nvar _, _ = any(nil).(algorithms.GCRA)\n",
		"nested/go.mod":           "module example.com/m/nested\n",
		"nested/n.go":             "package n\n\nimport \"example.com/m/algorithms\"\n\nvar _, _ = any(nil).(algorithms.GCRA)\n",
		"b/b.go":                  "package b\n\nimport \"example.com/other/algorithms\"\n\nvar _, _ = any(nil).(algorithms.GCRA)\n",
		"algorithms/algorithm.go": "package algorithms\n\nvar _, _ = any(nil).(GCRA)\n",
	}
	for name, text := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := typeUses(root, []string{"GCRA", "Queue"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"a/a.go:6: alg.GCRA", "a/a.go:8: alg.Queue"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}
