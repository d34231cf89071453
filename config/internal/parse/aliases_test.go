package parse

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit"
)

// aliasBomb is a file of a few hundred bytes whose aliases of aliases
// stand for 10^levels identities.
func aliasBomb(levels int) string {
	var b strings.Builder
	b.WriteString("rules:\n  - name: r0\n    key: &k0 {join: [ip, ip, ip, ip, ip, ip, ip, ip, ip, ip]}\n    fixed_window: 1/s\n")
	for i := 1; i < levels; i++ {
		ten := strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*k%d, ", i-1), 10), ", ")
		fmt.Fprintf(&b, "  - name: r%d\n    key: &k%d {join: [%s]}\n    fixed_window: 1/s\n", i, i, ten)
	}
	fmt.Fprintf(&b, "stacks:\n  - name: a\n    rules: [r%d]\n", levels-1)
	return b.String()
}

// TestAliasesAreBounded: aliases that stand for a node containing them,
// or for more nodes than a file could mean, are a problem at the alias,
// found at once, rather than a walk that never ends or fills the memory;
// an alias of an ordinary node is read as that node.
func TestAliasesAreBounded(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		want       string // the error's beginning; "" for none
	}{
		{"bomb", aliasBomb(6), "f.yaml:15:52: (document): found aliases that stand for more than 100000 nodes"},
		{"cycle", "rules:\n  - name: x\n    key: &k {join: [ip, *k]}\n    fixed_window: 1/s\nstacks: [{name: a, rules: [x]}]\n",
			"f.yaml:3:25: (document): found the alias *k inside the node it stands for"},
		{"ordinary", "rules:\n  - name: x\n    key: &k {join: [ip, {header: X-Key}]}\n    fixed_window: &w 1/s\n  - name: y\n    key: *k\n    fixed_window: *w\nstacks: [{name: a, rules: [x, y]}]\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := readWithin(t, tc.file)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("Read: %v, want no problem", err)
			case tc.want != "" && (!errors.Is(err, ratelimit.ErrConfig) || !strings.HasPrefix(fmt.Sprint(err), tc.want)):
				t.Errorf("Read: %v, want a problem beginning %q", err, tc.want)
			}
		})
	}
}

// readWithin reads file as f.yaml and returns its error, failing t when
// Read runs past a minute: a file whose reading would not end (an alias
// in itself, billions of nodes) must be refused, not read. Files that are
// refused take well under a second alone, and up to about 10 s under the
// race detector on a loaded machine.
func readWithin(t *testing.T, file string) error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := Read("f.yaml", []byte(file), nil)
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(time.Minute):
		t.Fatal("Read did not return within a minute")
		return nil
	}
}
