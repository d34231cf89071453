package config_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit"
	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/config"
	"github.com/seed-bff0c9e1/ratelimit/keyfunc"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/memstore"
)

// TestEnvoyDescriptor: a descriptor matches the rule of its domain's stack
// whose key reads exactly its entries' keys, in order, each part of the
// key reading the entry at its place; its identity is the values' (an
// address masked as the ip identity masks it) and its plan the one its
// value chooses.
func TestEnvoyDescriptor(t *testing.T) {
	// The rule pair reads one key twice.
	l, err := config.Load("testdata/envoy.yaml", memstore.Must())
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	e := l.Envoy()
	if e.Limiter() == nil || len(e.Limiter().Rules()) != 3 {
		t.Fatalf("the limiter: %v, want the three rules", e.Limiter())
	}
	match := func(domain string, kv ...string) (limiter.Check, limiter.Rule, error) {
		var keys, values []string
		for i := 0; i+1 < len(kv); i += 2 {
			keys, values = append(keys, kv[i]), append(values, kv[i+1])
		}
		return e.Descriptor(domain, keys, values)
	}
	c, r, err := match("edge", "path", "/a")
	if err != nil || c.Rule != "per-path" || r.Name != "per-path" || c.Identity != keyfunc.Hash("/a") || c.Plan != nil {
		t.Errorf("path /a: %+v, %v, %v; want per-path by the value's hash, no plan", c, r.Name, err)
	}
	if c, _, _ := match("edge", "path", "/health"); c.Plan != (algorithms.FixedWindow{Limit: 100, Window: time.Minute}) {
		t.Errorf("path /health: plan %v, want the value's", c.Plan)
	}
	for _, kv := range [][]string{{"edge", "path", "/a", "tenant", "t"}, {"edge", "other", "x"}, {"other", "path", "/a"}, {"edge"}} {
		if c, _, err := match(kv[0], kv[1:]...); c.Rule != "" || err != nil {
			t.Errorf("%v: matched %q (%v), want nothing", kv, c.Rule, err)
		}
	}
	a, _, _ := match("edge", "remote_address", "2001:db8::1")
	b, _, _ := match("edge", "remote_address", "2001:db8::2")
	if a.Rule != "per-ip" || a.Identity != b.Identity {
		t.Errorf("two addresses of one /64: %+v, %+v; want per-ip, one identity", a, b)
	}
	if _, _, err := match("edge", "remote_address", "not-an-address"); !errors.Is(err, ratelimit.ErrNoKey) || strings.Contains(err.Error(), "not-an-address") {
		t.Errorf("a remote_address that is not an address: %v; want ErrNoKey naming no value", err)
	}
	xy, _, _ := match("edge", "k", "x", "k", "y")
	xx, _, _ := match("edge", "k", "x", "k", "x")
	if xy.Rule != "pair" || xy.Identity == xx.Identity {
		t.Errorf("one key twice: %+v and %+v; want pair, each entry read at its place", xy, xx)
	}
}
