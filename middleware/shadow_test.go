package middleware_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/guard"
	"github.com/seed-bff0c9e1/ratelimit/headers"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/logtest"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/mwtest"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/redistest"
	"github.com/seed-bff0c9e1/ratelimit/keyfunc"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/memstore"
	"github.com/seed-bff0c9e1/ratelimit/middleware"
)

// A shadow rule over its limit never refuses: requests are answered as the
// enforced rule alone answers them, the shadow rule's would-be refusals go
// to the hook as "would_deny", and it is left out of the headers and
// the 429 body unless the headers ask for it.
func TestShadowRule(t *testing.T) {
	backends := map[string]any{"memstore": memstore.Must()}
	for _, b := range redistest.Backends(t) {
		backends[b.Name] = b.Client
	}
	rules := []middleware.Rule{perIP(3),
		{Rule: limiter.Rule{Name: "global", Algorithm: algorithms.FixedWindow{Limit: 1, Window: time.Minute}, Shadow: true}, Identity: keyfunc.Constant("all")}}
	rec := logtest.Capture(t)
	withShadow := headers.XRateLimit
	withShadow.Shadow = true
	for name, backend := range backends {
		for _, shown := range []bool{false, true} {
			var events []guard.Event
			opts := []any{clock(), limiter.WithPrefix(fmt.Sprintf("shadow-%v", shown)), limiter.WithDenyCache(0, 0),
				middleware.WithHook(func(e guard.Event) { events = append(events, e) })}
			limits := []string{"3", "3", "3", "3", "3"}
			if shown { // the shadow rule binds while it has the least remaining
				opts, limits = append(opts, middleware.WithHeaders(withShadow)), []string{"1", "1", "3", "3", "3"}
			}
			h := mwtest.New(t, backend, rules, opts...)(ok)
			var status []int
			var remaining, gotLimits, outcomes, ruleOutcomes []string
			logged := len(rec.Records())
			for range 5 {
				res := do(h, "GET", "/", "203.0.113.9:1", "Accept", "application/json")
				status = append(status, res.StatusCode)
				gotLimits = append(gotLimits, res.Header.Get("X-RateLimit-Limit"))
				remaining = append(remaining, res.Header.Get("X-RateLimit-Remaining"))
				if res.StatusCode == 429 {
					var p mwtest.Problem
					if err := json.NewDecoder(res.Body).Decode(&p); err != nil || !slices.Equal(p.ViolatedPolicies, []string{"per-ip"}) || p.RetryAfter < 1 {
						t.Errorf("%s: 429 body %+v %v, want per-ip alone", name, p, err)
					}
				}
			}
			for _, e := range events {
				outcomes = append(outcomes, e.Outcome)
				ruleOutcomes = append(ruleOutcomes, e.RuleOutcome(1))
			}
			got := fmt.Sprint(status, gotLimits, remaining, outcomes, ruleOutcomes)
			wantRemaining := []string{"2", "1", "0", "0", "0"}
			if shown {
				wantRemaining = []string{"0", "0", "0", "0", "0"}
			}
			want := fmt.Sprint([]int{200, 200, 200, 429, 429}, limits, wantRemaining,
				[]string{"allowed", "allowed", "allowed", "denied", "denied"},
				[]string{"allowed", "would_deny", "would_deny", "would_deny", "would_deny"})
			if got != want {
				t.Errorf("%s, shadow headers %v:\ngot  %s\nwant %s", name, shown, got, want)
			}
			// Four would-be refusals: logged once, then at most once a
			// minute (TestShadowLogIsBounded), never with the identity.
			lines := rec.Records()[logged:]
			if len(lines) < 1 || len(lines) > 4 {
				t.Errorf("%s: %d log lines for 4 would-be refusals", name, len(lines))
			}
			for _, l := range lines {
				if a := logtest.Attrs(l); a["rule"].String() != "global" || strings.Contains(fmt.Sprint(a), "203.0.113") {
					t.Errorf("%s: log line %v", name, a)
				}
			}
		}
	}
}

// A shadow rule with a Lease is refused at construction, naming the rule.
func TestShadowRuleNotLeased(t *testing.T) {
	r := middleware.Rule{Rule: limiter.Rule{Name: "global", Algorithm: algorithms.GCRA{Rate: 10, Period: time.Second, Burst: 10}, Lease: time.Second, Shadow: true}, Identity: keyfunc.Constant("all")}
	if _, err := mwtest.Build(memstore.Must(), []middleware.Rule{r}); err == nil {
		t.Fatal("a leased shadow rule was accepted")
	}
}
