package internal_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The sizes a newcomer can read: a package's hand-written Go (tests aside)
// under 3,000 lines, a file under 600, a function under 100. Generated files
// ("Code generated ... DO NOT EDIT.") do not count.
const (
	maxPackageLines  = 3000
	maxFileLines     = 600
	maxFunctionLines = 100
)

// TestSizes fails on a package, file or function of internal/, cmd/ or
// api/ over its bound, naming it and its size.
func TestSizes(t *testing.T) {
	fset := token.NewFileSet()
	packages := map[string]int{}
	for _, root := range []string{".", "../cmd", "../api"} {
		err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
			if err != nil {
				return err
			}
			if ast.IsGenerated(f) {
				return nil
			}
			lines := fset.File(f.Pos()).LineCount()
			packages[filepath.Dir(path)] += lines
			if lines > maxFileLines {
				t.Errorf("%s has %d lines, over %d: split it by what its parts do", path, lines, maxFileLines)
			}
			for _, d := range f.Decls {
				fn, ok := d.(*ast.FuncDecl)
				if !ok {
					continue
				}
				if n := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1; n > maxFunctionLines {
					t.Errorf("%s: %s has %d lines, over %d: write it in steps", path, fn.Name.Name, n, maxFunctionLines)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(packages) < 50 {
		t.Fatalf("only %d packages walked: the walk is broken", len(packages))
	}
	for dir, lines := range packages {
		if lines > maxPackageLines {
			t.Errorf("package %s has %d lines, over %d: give its parts rooms of their own", dir, lines, maxPackageLines)
		}
	}
}
