package compile

import (
	"context"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/config/internal/parse"
	"github.com/seed-bff0c9e1/ratelimit/guard"
	"github.com/seed-bff0c9e1/ratelimit/keyfunc"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/middleware"
)

type userKey struct{}
type planKey struct{}

// funcs are the key functions testdata/every.* name.
var funcs = map[string]keyfunc.KeyFunc{"user": keyfunc.Context(userKey{}), "plan": keyfunc.Context(planKey{})}

// everyInGo is testdata/every.yaml written in Go.
func everyInGo(t *testing.T) []middleware.Rule {
	ip, err := keyfunc.ClientIP(keyfunc.IPConfig{TrustedProxies: []string{"10.0.0.0/8", "192.0.2.1"}, IPv4PrefixLen: 24, IPv6PrefixLen: 48})
	if err != nil {
		t.Fatal(err)
	}
	plans := map[string]algorithms.Algorithm{
		"pro":  algorithms.GCRA{Rate: 10000, Period: time.Hour, Burst: 500},
		"free": algorithms.SlidingWindow{Limit: 10, Window: 24 * time.Hour},
	}
	big := map[string]algorithms.Algorithm{"big": algorithms.Concurrency{Limit: 500, TTL: time.Minute}}
	return []middleware.Rule{
		{Rule: limiter.Rule{Name: "fw", Algorithm: algorithms.FixedWindow{Limit: 100, Window: time.Minute}}, Identity: ip},
		{Rule: limiter.Rule{Name: "fw-anchored", Algorithm: algorithms.FixedWindow{Limit: 10, Window: time.Hour, Anchored: true}}, Identity: keyfunc.Route()},
		{Rule: limiter.Rule{Name: "sw", Algorithm: algorithms.SlidingWindow{Limit: 100, Window: time.Minute}}, Identity: keyfunc.Header("X-API-Key"), AltIdentity: ip},
		{Rule: limiter.Rule{Name: "sl", Algorithm: algorithms.SlidingLog{Limit: 5, Window: 15 * time.Minute}, Penalty: 15 * time.Minute}, Identity: keyfunc.FormValue("username"), Optional: true},
		{Rule: limiter.Rule{Name: "tb", Algorithm: algorithms.TokenBucket{Capacity: 10000, Rate: 5000, Period: time.Second}, Lease: time.Second}, Identity: keyfunc.Constant("all")},
		{Rule: limiter.Rule{Name: "lb", Algorithm: algorithms.LeakyBucket{Capacity: 20, Rate: 10, Period: time.Second}, Blockable: true}, Identity: keyfunc.Context(userKey{})},
		{Rule: limiter.Rule{Name: "gc", Algorithm: algorithms.GCRA{Rate: 1000, Period: time.Hour, Burst: 1000}, Shadow: true}, Identity: keyfunc.Join(ip, keyfunc.Header("X-Tenant")),
			Plan: func(r *http.Request) algorithms.Algorithm { return plans[r.Header.Get("X-Plan")] }},
		{Rule: limiter.Rule{Name: "qu", Algorithm: algorithms.Queue{Rate: 10, Period: time.Second, MaxDelay: 2 * time.Second}}, Identity: keyfunc.Constant("jobs")},
		{Rule: limiter.Rule{Name: "cc", Algorithm: algorithms.Concurrency{Limit: 50, TTL: 30 * time.Second}}, Identity: keyfunc.Context(userKey{}),
			Plan: func(r *http.Request) algorithms.Algorithm {
				p, _ := r.Context().Value(planKey{}).(string)
				return big[p]
			}},
	}
}

// requests are requests that tell the key functions, alternative keys
// and plans of testdata/every.* apart.
func requests() []*http.Request {
	var reqs []*http.Request
	for i, peer := range []string{"198.51.100.7:1234", "10.1.2.3:80", "192.0.2.1:80", "[2001:db8:1:2::9]:443"} {
		for j := range 4 {
			form := url.Values{}
			if j%2 == 0 {
				form.Set("username", "ann")
			}
			r := httptest.NewRequest(http.MethodPost, "/login", strings.NewReader(form.Encode()))
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			r.RemoteAddr = peer
			r.Header.Set("X-Forwarded-For", "203.0.113.9, 198.51.100."+string(rune('1'+i)))
			if j > 0 {
				r.Header.Set("X-API-Key", "sk-"+peer)
				r.Header.Set("X-Tenant", "acme")
				r.Pattern = "POST /login"
			}
			r.Header.Set("X-Plan", []string{"pro", "free", "", "gold"}[j])
			if j != 1 {
				ctx := context.WithValue(r.Context(), userKey{}, "u"+string(rune('0'+j)))
				r = r.WithContext(context.WithValue(ctx, planKey{}, []string{"big", "", "small", ""}[j]))
			}
			reqs = append(reqs, r)
		}
	}
	return reqs
}

// TestFileMatchesGo: a file of every algorithm and every kind of key,
// in YAML and in JSON, builds the rules its Go equivalent does: the same
// limiter rules, and key functions, alternative keys and plans that
// answer every request alike.
func TestFileMatchesGo(t *testing.T) {
	want := everyInGo(t)
	for _, name := range []string{"testdata/every.yaml", "testdata/every.json"} {
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("../..", name)) // config's testdata
			if err != nil {
				t.Fatal(err)
			}
			f, err := parse.Read(name, data, slices.Collect(maps.Keys(funcs)))
			if err != nil {
				t.Fatal(err)
			}
			ip, err := keyfunc.ClientIP(f.ClientIP)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, r := range f.Rules {
				names = append(names, r.Name)
			}
			got := rulesOf(f, names, httpKeys{ip: ip, funcs: funcs})
			if g, w := guard.Limits(got), guard.Limits(want); !reflect.DeepEqual(g, w) {
				t.Fatalf("limiter rules:\n got %+v\nwant %+v", g, w)
			}
			for i := range want {
				g, w := got[i], want[i]
				if g.Optional != w.Optional {
					t.Errorf("rule %s: Optional %v, want %v", w.Name, g.Optional, w.Optional)
				}
				if g.Shadow != w.Shadow {
					t.Errorf("rule %s: Shadow %v, want %v", w.Name, g.Shadow, w.Shadow)
				}
				for j, r := range requests() {
					sameKey(t, w.Name+" key", j, g.Identity, w.Identity, r)
					sameKey(t, w.Name+" alt_key", j, g.AltIdentity, w.AltIdentity, r)
					if (g.Plan == nil) != (w.Plan == nil) {
						t.Fatalf("rule %s: plan %v, want %v", w.Name, g.Plan != nil, w.Plan != nil)
					}
					if g.Plan != nil && g.Plan(r) != w.Plan(r) {
						t.Errorf("rule %s, request %d: plan %v, want %v", w.Name, j, g.Plan(r), w.Plan(r))
					}
				}
			}
			wantStacks := []parse.Stack{
				{Name: "api", Rules: []string{"fw", "sw", "tb"}, Match: []string{"/api/"}},
				{Name: "login", Rules: []string{"sl", "fw-anchored"}, Match: []string{"POST /login"}, Failure: "open", Exempt: []string{}},
				{Name: "jobs", Rules: []string{"lb", "gc", "qu", "cc"}},
			}
			for i, w := range wantStacks {
				s := f.Stacks[i] // as read, without the positions
				g := parse.Stack{Name: s.Name, Rules: s.Rules, Match: s.Match, Methods: s.Methods, Domain: s.Domain, Failure: s.Failure, Exempt: s.Exempt}
				if !reflect.DeepEqual(g, w) {
					t.Errorf("stack %d: got %+v, want %+v", i, g, w)
				}
			}
			if f.Prefix != "svc" || f.Failure != "closed" || !reflect.DeepEqual(f.Exempt, []string{"127.0.0.1"}) {
				t.Errorf("file: prefix %q, fail %q, exempt %q", f.Prefix, f.Failure, f.Exempt)
			}
		})
	}
}

// sameKey fails unless got and want give request j the same identity, or
// both fail on it.
func sameKey(t *testing.T, what string, j int, got, want keyfunc.KeyFunc, r *http.Request) {
	t.Helper()
	if (got == nil) != (want == nil) {
		t.Fatalf("%s: set %v, want %v", what, got != nil, want != nil)
	}
	if got == nil {
		return
	}
	g, gerr := got(r)
	w, werr := want(r)
	if g != w || (gerr == nil) != (werr == nil) {
		t.Errorf("%s, request %d: got %q (%v), want %q (%v)", what, j, g, gerr, w, werr)
	}
}
