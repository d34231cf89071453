package limiter_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit"
	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/redistest"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/memstore"
	"github.com/seed-bff0c9e1/ratelimit/redisstore"
	"github.com/seed-bff0c9e1/ratelimit/store"
)

// verdict is a rule's part of a shadow step: its own verdict and what it
// reports remaining.
type verdict struct {
	allowed   bool
	remaining int
}

// shadowStep is one request of cost to the stack of an enforced rule and a
// shadow rule (or a Settle of the previous request's decision with final
// costs), and what it must answer.
type shadowStep struct {
	cost     int
	final    []int // a Settle of the previous decision, instead of a request
	allowed  bool  // the stack's verdict
	enf, sh  verdict
	shRetry  time.Duration // the shadow rule's RetryAfter
	stackRet time.Duration // the Decision's RetryAfter
}

var shadowTables = []struct {
	name     string
	enf, sh  int // the fixed windows' limits (an hour each)
	identity string
	steps    []shadowStep
}{
	// The shadow rule is the tighter: requests are admitted exactly as the
	// enforced rule alone admits them (10 units), the shadow rule counts
	// while it allows, and its would-be refusals consume nothing of
	// either rule.
	{"shadow tighter", 10, 5, "a", []shadowStep{
		{cost: 2, allowed: true, enf: verdict{true, 8}, sh: verdict{true, 3}},
		{cost: 2, allowed: true, enf: verdict{true, 6}, sh: verdict{true, 1}},
		// Would-be refusal: the stack is allowed, its RetryAfter 0.
		{cost: 2, allowed: true, enf: verdict{true, 4}, sh: verdict{false, 1}, shRetry: 50 * time.Minute},
		// A final cost above a would-be refusal's charges nothing more.
		{final: []int{2, 3}, allowed: true},
		// The refusal consumed nothing of the shadow rule: 1 unit left.
		{cost: 1, allowed: true, enf: verdict{true, 3}, sh: verdict{true, 0}},
		{cost: 2, allowed: true, enf: verdict{true, 1}, sh: verdict{false, 0}, shRetry: 50 * time.Minute},
		// The enforced rule refuses: the stack's wait is its own.
		{cost: 2, allowed: false, enf: verdict{false, 1}, sh: verdict{false, 0}, shRetry: 50 * time.Minute, stackRet: 50 * time.Minute},
		{cost: 1, allowed: true, enf: verdict{true, 0}, sh: verdict{false, 0}, shRetry: 50 * time.Minute},
		{cost: 1, allowed: false, enf: verdict{false, 0}, sh: verdict{false, 0}, shRetry: 50 * time.Minute, stackRet: 50 * time.Minute},
	}},
	// The enforced rule is the tighter: its refusals consume nothing of
	// the shadow rule, which reports it would have allowed.
	{"enforced tighter", 3, 10, "b", []shadowStep{
		{cost: 1, allowed: true, enf: verdict{true, 2}, sh: verdict{true, 9}},
		{cost: 1, allowed: true, enf: verdict{true, 1}, sh: verdict{true, 8}},
		{cost: 1, allowed: true, enf: verdict{true, 0}, sh: verdict{true, 7}},
		{cost: 1, allowed: false, enf: verdict{false, 0}, sh: verdict{true, 7}, stackRet: 50 * time.Minute},
		{cost: 4, allowed: false, enf: verdict{false, 0}, sh: verdict{true, 7}, stackRet: algorithms.Never}, // above the limit
		{cost: 0, allowed: true, enf: verdict{true, 0}, sh: verdict{true, 7}},
	}},
	// Settle gives back exactly what the shadow rule consumed.
	{"settle", 10, 10, "c", []shadowStep{
		{cost: 4, allowed: true, enf: verdict{true, 6}, sh: verdict{true, 6}},
		{final: []int{1, 1}, allowed: true},
		{cost: 0, allowed: true, enf: verdict{true, 9}, sh: verdict{true, 9}},
		{cost: 9, allowed: true, enf: verdict{true, 0}, sh: verdict{true, 0}},
		{final: []int{9, 2}, allowed: true},
		{cost: 0, allowed: true, enf: verdict{true, 0}, sh: verdict{true, 7}},
	}},
}

// shadowTable runs shadowTables on s at fixed instants from each base,
// ten minutes into an hour (the windows end 50 minutes later).
func shadowTable(t *testing.T, s store.Store, prefix string) {
	t.Helper()
	for _, base := range bases {
		for _, tc := range shadowTables {
			rules := []limiter.Rule{
				{Name: "enf", Algorithm: algorithms.FixedWindow{Limit: tc.enf, Window: time.Hour}},
				{Name: "sh", Algorithm: algorithms.FixedWindow{Limit: tc.sh, Window: time.Hour}, Shadow: true},
			}
			lim := newLimiter(t, s, rules, fixedClock(base.Add(10*time.Minute)),
				limiter.WithPrefix(fmt.Sprintf("%s%d", prefix, base.Year())), limiter.WithDenyCache(0, 0))
			var d limiter.Decision
			for i, s := range tc.steps {
				if s.final != nil {
					if _, err := lim.Settle(ctx, d, s.final...); err != nil {
						t.Fatalf("%s %d step %d: settle: %v", tc.name, base.Year(), i, err)
					}
					continue
				}
				var err error
				d, err = lim.Decide(ctx, limiter.Check{Rule: "enf", Identity: tc.identity, Cost: s.cost},
					limiter.Check{Rule: "sh", Identity: tc.identity, Cost: s.cost})
				if err != nil {
					t.Fatalf("%s %d step %d: %v", tc.name, base.Year(), i, err)
				}
				enf, sh := d.Results[0], d.Results[1]
				got := fmt.Sprint(d.Allowed, verdict{enf.Allowed, enf.Remaining}, verdict{sh.Allowed, sh.Remaining}, sh.RetryAfter, d.RetryAfter(), enf.Shadow, sh.Shadow)
				want := fmt.Sprint(s.allowed, s.enf, s.sh, s.shRetry, s.stackRet, false, true)
				if got != want {
					t.Errorf("%s %d step %d (cost %d): got %s, want %s", tc.name, base.Year(), i, s.cost, got, want)
				}
			}
		}
	}
}

// TestShadowRules runs the shadow tables on the memstore, miniredis, a real
// redis-server, and miniredis as a cluster (a stack spanning slots is
// decided by consume-then-refund; TestCluster runs them on a real one).
func TestShadowRules(t *testing.T) {
	stores := everyStore(t)
	_, mini := redistest.Mini(t)
	stores["miniredis cluster"] = mustStore(redisstore.New(mini, redisstore.WithCluster(), redisstore.WithMinTTL(time.Hour)))
	for name, s := range stores {
		t.Run(name, func(t *testing.T) { shadowTable(t, s, "shadow") })
	}
}

// A shadow denial writes no block, while a block in place shows as a
// would-be refusal; neither refuses the request.
func TestShadowPenaltyWritesNoBlock(t *testing.T) {
	for name, s := range everyStore(t) {
		t.Run(name, func(t *testing.T) {
			now := bases[1]
			rules := []limiter.Rule{{Name: "login", Algorithm: algorithms.FixedWindow{Limit: 1, Window: time.Minute}, Penalty: time.Hour, Shadow: true}}
			lim := newLimiter(t, s, rules, limiter.WithClock(func() time.Time { return now }), limiter.WithDenyCache(0, 0))
			want := []bool{true, false, false}
			for i, w := range want {
				d, err := lim.Allow(ctx, "login", "x")
				if err != nil || !d.Allowed || d.Results[0].Allowed != w || d.Results[0].Blocked {
					t.Fatalf("request %d: %+v %v, want allowed, the rule's own verdict %v, not blocked", i, d, err, w)
				}
			}
			now = now.Add(time.Minute) // the next window: no block was written
			if d, err := lim.Allow(ctx, "login", "x"); err != nil || !d.Results[0].Allowed {
				t.Fatalf("next window: %+v %v, want the shadow rule to allow (no penalty block)", d, err)
			}
			if err := lim.Block(ctx, "login", "x", time.Hour); err != nil {
				t.Fatal(err)
			}
			d, err := lim.Allow(ctx, "login", "x")
			if err != nil || !d.Allowed || d.Results[0].Allowed || !d.Results[0].Blocked || d.Results[0].RetryAfter != time.Hour || d.RetryAfter() != 0 {
				t.Fatalf("blocked: %+v %v, want allowed, a would-be refusal for an hour, blocked", d, err)
			}
		})
	}
}

// A shadow queue rule takes its turn but delays nothing: Hold does not
// wait for it (with a context already done it would give the decision back
// and fail).
func TestShadowQueueDelaysNothing(t *testing.T) {
	rules := []limiter.Rule{{Name: "q", Algorithm: algorithms.Queue{Rate: 1, Period: time.Second, MaxDelay: time.Minute}, Shadow: true}}
	lim := newLimiter(t, memstore.Must(), rules, fixedClock(bases[0]))
	done, cancel := context.WithCancel(ctx)
	cancel()
	for i := range 3 {
		d, err := lim.Allow(ctx, "q", "x")
		if err != nil || !d.Allowed || d.Results[0].Delay != time.Duration(i)*time.Second {
			t.Fatalf("request %d: %+v %v, want allowed with its turn %d s away", i, d, err, i)
		}
		if err := lim.Hold(done, d); err != nil {
			t.Fatalf("request %d: Hold waited for a shadow rule's turn: %v", i, err)
		}
	}
}

// The deny cache repeats an enforced rule's denial without making the
// shadow rule refuse: its result in a cached denial is Undecided.
func TestShadowDenyCache(t *testing.T) {
	_, mini := redistest.Mini(t)
	rules := []limiter.Rule{
		{Name: "enf", Algorithm: algorithms.FixedWindow{Limit: 1, Window: time.Hour}},
		{Name: "sh", Algorithm: algorithms.FixedWindow{Limit: 1, Window: time.Hour}, Shadow: true},
	}
	lim := newLimiter(t, mustStore(redisstore.New(mini)), rules, fixedClock(bases[0]))
	checks := []limiter.Check{{Rule: "enf", Identity: "x", Cost: 1}, {Rule: "sh", Identity: "x", Cost: 1}}
	for i := range 3 {
		d, err := lim.Decide(ctx, checks...)
		if err != nil || d.Allowed != (i == 0) || d.Cached != (i == 2) {
			t.Fatalf("request %d: %+v %v", i, d, err)
		}
		if sh := d.Results[1]; i == 2 && (!sh.Undecided || !sh.Allowed || sh.RetryAfter != 0) {
			t.Fatalf("cached denial: shadow result %+v, want Undecided", sh)
		}
	}
	// The shadow rule alone is over its limit, and never refuses.
	for i := range 3 {
		if d, err := lim.Allow(ctx, "sh", "x"); err != nil || !d.Allowed || d.Cached || d.Results[0].Allowed {
			t.Fatalf("shadow alone %d: %+v %v, want allowed, not cached, a would-be refusal", i, d, err)
		}
	}
}

// A shadow rule cannot be leased: New names the rule.
func TestShadowLeaseRefused(t *testing.T) {
	_, err := limiter.New(memstore.Must(), []limiter.Rule{{Name: "global", Algorithm: algorithms.GCRA{Rate: 10, Period: time.Second, Burst: 10},
		Lease: time.Second, Shadow: true}})
	if !errors.Is(err, ratelimit.ErrConfig) || !strings.Contains(err.Error(), `rule "global"`) || !strings.Contains(err.Error(), "shadow") {
		t.Fatalf("got %v, want a config error naming the rule", err)
	}
}

// A stack of a leased rule and a shadow rule: the shadow check goes to the
// store whether the lease serves the leased rule or a take goes with it,
// and is counted exactly, never refusing.
func TestShadowBesideLeasedRule(t *testing.T) {
	rules := []limiter.Rule{
		{Name: "global", Algorithm: algorithms.GCRA{Rate: 1000, Period: time.Second, Burst: 1000}, Lease: time.Second},
		{Name: "sh", Algorithm: algorithms.FixedWindow{Limit: 3, Window: time.Hour}, Shadow: true},
	}
	lim := newLimiter(t, memstore.Must(), rules, fixedClock(bases[1]))
	for i := range 6 {
		d, err := lim.Decide(ctx, limiter.Check{Rule: "global", Identity: "all", Cost: 1}, limiter.Check{Rule: "sh", Identity: "x", Cost: 1})
		sh := d.Results[1]
		if err != nil || !d.Allowed || sh.Undecided || sh.Allowed != (i < 3) || sh.Remaining != max(0, 2-i) {
			t.Fatalf("request %d: %+v %v, want allowed, the shadow rule counting down from 2 then refusing", i, d, err)
		}
	}
	if err := lim.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestRefused: a result refused the request when it denied and is not a
// shadow rule's.
func TestRefused(t *testing.T) {
	for _, tc := range []struct {
		allowed, shadow, want bool
	}{{true, false, false}, {false, false, true}, {true, true, false}, {false, true, false}} {
		r := limiter.RuleResult{Shadow: tc.shadow}
		r.Allowed = tc.allowed
		if got := r.Refused(); got != tc.want {
			t.Errorf("Allowed %v, Shadow %v: Refused %v, want %v", tc.allowed, tc.shadow, got, tc.want)
		}
	}
}
