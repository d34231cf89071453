package limiter_test

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seed-bff0c9e1/ratelimit"
	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/redistest"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/ruletest"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/memstore"
	"github.com/seed-bff0c9e1/ratelimit/redisstore"
)

func TestStackIsAllOrNothing(t *testing.T) {
	for _, b := range redistest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			rules := append(ruletest.Six(10), limiter.Rule{Name: "gate", Algorithm: algorithms.FixedWindow{Limit: 1, Window: time.Hour}})
			lim, err := ruletest.Build(b.Client, rules, fixedClock(bases[0]), limiter.WithPrefix("stack"))
			if err != nil {
				t.Fatal(err)
			}
			for i := range 6 {
				d, err := lim.Decide(ctx, ruletest.Checks(rules, "u", 1)...)
				if err != nil {
					t.Fatal(err)
				}
				if got, want := d.Allowed, i == 0; got != want {
					t.Fatalf("request %d: allowed %v, want %v", i, got, want)
				}
				if !d.Allowed {
					gate := d.Results[6]
					if gate.Allowed || gate.Rule != "gate" {
						t.Fatalf("request %d: gate result %+v", i, gate)
					}
					for _, r := range d.Results[:6] {
						if !r.Allowed || r.Remaining != 9 {
							t.Errorf("request %d: rule %s reports %+v, want allowed with 9 remaining", i, r.Rule, r.Result)
						}
					}
				}
			}
			// Peek every rule: the denied requests consumed nothing.
			d, err := lim.Decide(ctx, ruletest.Checks(rules[:6], "u", 0)...)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range d.Results {
				if r.Remaining != 9 {
					t.Errorf("rule %s: remaining %d after 5 denied stacks, want 9", r.Rule, r.Remaining)
				}
			}
		})
	}
}

func TestDeniedRequestChangesNothing(t *testing.T) {
	for _, b := range redistest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			for _, r := range ruletest.Six(3) {
				lim, err := ruletest.Build(b.Client, []limiter.Rule{r}, fixedClock(bases[1]), limiter.WithPrefix("deny"))
				if err != nil {
					t.Fatal(err)
				}
				for range 3 {
					if d, err := lim.Allow(ctx, r.Name, "x"); err != nil || !d.Allowed {
						t.Fatalf("%s: fill: %v %v", r.Name, d, err)
					}
				}
				key := fmt.Sprintf("deny:{%s:x}:%s", r.Name, ruletest.KeySuffix(r.Algorithm))
				before, ttlBefore := snapshot(t, b.Client, key)
				for _, cost := range []int{1, 2, 4} {
					if d, err := lim.Decide(ctx, limiter.Check{Rule: r.Name, Identity: "x", Cost: cost}); err != nil || d.Allowed {
						t.Fatalf("%s: cost %d: %+v %v, want denied", r.Name, cost, d, err)
					}
				}
				after, ttlAfter := snapshot(t, b.Client, key)
				if after != before {
					t.Errorf("%s: a denied request changed the stored state from %s to %s", r.Name, before, after)
				}
				if ttlAfter > ttlBefore {
					t.Errorf("%s: a denied request extended the TTL from %v to %v", r.Name, ttlBefore, ttlAfter)
				}
			}
		})
	}
}

// snapshot renders a key's value (DUMP is not in miniredis) and its TTL.
func snapshot(t *testing.T, c *redis.Client, key string) (string, time.Duration) {
	t.Helper()
	var v any
	var err error
	switch typ := c.Type(ctx, key).Val(); typ {
	case "string":
		v, err = c.Get(ctx, key).Result()
	case "hash":
		v, err = c.HGetAll(ctx, key).Result()
	case "zset":
		v, err = c.ZRangeWithScores(ctx, key, 0, -1).Result()
	default:
		t.Fatalf("%s: unexpected type %q", key, typ)
	}
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprint(v), c.PTTL(ctx, key).Val()
}

func TestEveryKeyHasABoundedTTL(t *testing.T) {
	for _, b := range redistest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			lim, err := ruletest.Build(b.Client, ruletest.Six(5), limiter.WithPrefix("ttl"))
			if err != nil {
				t.Fatal(err)
			}
			d, err := lim.Decide(ctx, ruletest.Checks(ruletest.Six(5), "a", 1)...)
			if err != nil || !d.Allowed {
				t.Fatalf("%+v %v", d, err)
			}
			for i, r := range d.Results {
				key := fmt.Sprintf("ttl:{%s:a}:%s", r.Rule, ruletest.KeySuffix(ruletest.Six(5)[i].Algorithm))
				ttl, err := b.Client.PTTL(ctx, key).Result()
				if err != nil {
					t.Fatal(err)
				}
				if ttl <= 0 || ttl > r.ResetAfter {
					t.Errorf("%s: TTL %v, want in (0, %v]", key, ttl, r.ResetAfter)
				}
			}
		})
	}
}

func TestServerTimeIsTheDefaultClock(t *testing.T) {
	m, c := redistest.Mini(t)
	// The deny cache counts on the local clock, which does not follow
	// miniredis's SetTime.
	lim, err := ruletest.Build(c, []limiter.Rule{{Name: "r", Algorithm: algorithms.SlidingLog{Limit: 2, Window: time.Second}}}, limiter.WithDenyCache(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	m.SetTime(bases[0].Add(123456 * time.Microsecond))
	for i, want := range []bool{true, true, false} {
		d, err := lim.Allow(ctx, "r", "a")
		if err != nil {
			t.Fatal(err)
		}
		if d.Allowed != want {
			t.Fatalf("request %d: allowed %v, want %v", i, d.Allowed, want)
		}
	}
	// One microsecond before the first entries leave the window: still denied.
	m.SetTime(bases[0].Add(1123455 * time.Microsecond))
	if d, _ := lim.Allow(ctx, "r", "a"); d.Allowed || d.Results[0].RetryAfter != time.Millisecond {
		t.Fatalf("1µs early: %+v, want denied with RetryAfter 1ms", d.Results[0])
	}
	m.SetTime(bases[0].Add(1123456 * time.Microsecond))
	if d, _ := lim.Allow(ctx, "r", "a"); !d.Allowed {
		t.Fatalf("on time: denied %+v", d.Results[0])
	}
}

func TestRealRedisTime(t *testing.T) {
	s := redistest.Start(t)
	lim, err := ruletest.Build(s.Client, []limiter.Rule{{Name: "g", Algorithm: algorithms.GCRA{Rate: 1, Period: time.Hour, Burst: 3}}})
	if err != nil {
		t.Fatal(err)
	}
	var d limiter.Decision
	for range 4 {
		if d, err = lim.Allow(ctx, "g", "a"); err != nil {
			t.Fatal(err)
		}
	}
	r := d.Results[0]
	if r.Allowed || r.RetryAfter <= 0 || r.RetryAfter > time.Hour || r.ResetAfter <= 2*time.Hour || r.ResetAfter > 3*time.Hour {
		t.Fatalf("4th request of burst 3: %+v", r)
	}
	v, err := s.Client.Get(ctx, "ratelimit:{g:a}:gce").Result()
	if err != nil {
		t.Fatal(err)
	}
	head, _, _ := strings.Cut(v, ":") // the TAT and its epoch, then its ledger and plan
	head, _, _ = strings.Cut(head, "#")
	tat, err := strconv.ParseInt(head, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	now, _ := s.Client.Time(ctx).Result()
	if diff := time.UnixMicro(tat).Sub(now); diff <= 2*time.Hour || diff > 3*time.Hour {
		t.Fatalf("stored TAT is %v from the server's TIME, want 3h minus the test's duration", diff)
	}
}

func TestConcurrentRequestsAdmitExactlyTheLimit(t *testing.T) {
	s := redistest.Start(t)
	for i, r := range ruletest.Six(100) {
		t.Run(r.Name, func(t *testing.T) {
			lim, err := ruletest.Build(s.Client, []limiter.Rule{r}, fixedClock(bases[0].Add(time.Duration(i)*time.Minute)), exactnessTimeout)
			if err != nil {
				t.Fatal(err)
			}
			var admitted, denied atomic.Int64
			var wg sync.WaitGroup
			for range 64 {
				wg.Go(func() {
					for range 5 {
						d, err := lim.Allow(ctx, r.Name, "hot")
						if err != nil {
							t.Error(err)
							return
						}
						if d.Allowed {
							admitted.Add(1)
						} else {
							denied.Add(1)
						}
					}
				})
			}
			wg.Wait()
			if got, want := admitted.Load(), int64(100); got != want {
				t.Errorf("admitted %d, want %d (denied %d)", got, want, denied.Load())
			}
		})
	}
}

func TestInvalidChecks(t *testing.T) {
	_, c := redistest.Mini(t)
	lim, err := ruletest.Build(c, ruletest.Six(3))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		checks []limiter.Check
		want   string
	}{
		{"empty identity", []limiter.Check{{Rule: "fw", Identity: "", Cost: 1}}, "empty identity"},
		{"negative cost", []limiter.Check{{Rule: "sl", Identity: "a", Cost: -1}}, "negative cost"},
		{"unknown rule", []limiter.Check{{Rule: "sw", Identity: "a", Cost: 1}, {Rule: "nope", Identity: "a", Cost: 1}}, `no rule "nope"`},
		{"no rule named", []limiter.Check{{Identity: "a", Cost: 1}}, `no rule ""`},
		{"same key twice", []limiter.Check{{Rule: "sw", Identity: "a", Cost: 1}, {Rule: "sw", Identity: "a", Cost: 1}}, "twice"},
		{"same key twice among many", append(manyChecks("sw", 20), limiter.Check{Rule: "sw", Identity: "7", Cost: 1}), "twice"},
		{"nil pointer plan", []limiter.Check{{Rule: "gc", Identity: "a", Cost: 1, Plan: (*algorithms.GCRA)(nil)}}, `rule "gc": invalid algorithm: *algorithms.GCRA is a pointer`},
		{"pointer plan", []limiter.Check{{Rule: "gc", Identity: "a", Cost: 1, Plan: &algorithms.GCRA{Rate: 1, Period: time.Second, Burst: 1}}}, "*algorithms.GCRA is a pointer"},
	} {
		_, err := lim.Decide(ctx, tc.checks...)
		if !errors.Is(err, limiter.ErrCheck) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want ErrCheck mentioning %q", tc.name, err, tc.want)
		}
	}
	if _, err := lim.Allow(ctx, "r", "a"); !errors.Is(err, limiter.ErrCheck) {
		t.Errorf("a rule that does not exist: got %v, want ErrCheck", err)
	}
}

// manyChecks are n checks of rule, each of its own identity.
func manyChecks(rule string, n int) []limiter.Check {
	checks := make([]limiter.Check, n)
	for i := range checks {
		checks[i] = limiter.Check{Rule: rule, Identity: strconv.Itoa(i), Cost: 1}
	}
	return checks
}

// TestManyChecksAreBounded: a stack of 256 checks is decided, and one of
// 257 is refused (ErrCheck) before the store is asked. One script run
// decides a stack while Redis serves nobody else: 20,000 checks outlasted
// the store's timeout, a failure of Redis as the breaker counts it, so
// three such calls marked Redis down for every request (an Envoy request
// may carry as many descriptors as 4 MiB hold).
func TestManyChecksAreBounded(t *testing.T) {
	st, err := memstore.New()
	if err != nil {
		t.Fatal(err)
	}
	lim, err := limiter.New(st, []limiter.Rule{{Name: "fw", Algorithm: algorithms.FixedWindow{Limit: 1, Window: time.Hour}}})
	if err != nil {
		t.Fatal(err)
	}
	defer lim.Close()
	if d, err := lim.Decide(ctx, manyChecks("fw", 256)...); err != nil || !d.Allowed || len(d.Results) != 256 {
		t.Fatalf("256 checks: allowed %v, %d results, %v", d.Allowed, len(d.Results), err)
	}
	_, err = lim.Decide(ctx, manyChecks("fw", 100_000)...)
	if !errors.Is(err, limiter.ErrCheck) || errors.Is(err, limiter.ErrBackend) || !strings.Contains(err.Error(), "at most 256") {
		t.Fatalf("100,000 checks: %v, want ErrCheck naming the bound", err)
	}
	if d, err := lim.Allow(ctx, "fw", "99999"); err != nil || !d.Allowed { // a limit of 1
		t.Errorf("an identity of the refused stack: %+v, %v: it consumed", d, err)
	}
}

func TestInvalidConfiguration(t *testing.T) {
	_, c := redistest.Mini(t)
	ok := algorithms.FixedWindow{Limit: 1, Window: time.Second}
	for _, tc := range []struct {
		name  string
		rdb   redis.Scripter
		rules []limiter.Rule
		opts  []any
		want  string
	}{
		{"nil client", nil, []limiter.Rule{{Name: "a", Algorithm: ok}}, nil, "nil Redis client"},
		{"nil *redis.Client", (*redis.Client)(nil), []limiter.Rule{{Name: "a", Algorithm: ok}}, nil, "nil Redis client"},
		{"zero option", c, []limiter.Rule{{Name: "a", Algorithm: ok}}, []any{limiter.Option(nil)}, "nil Option"},
		{"no rules", c, nil, nil, "no rules"},
		{"empty name", c, []limiter.Rule{{Algorithm: ok}}, nil, `name ""`},
		{"brace in name", c, []limiter.Rule{{Name: "a}", Algorithm: ok}}, nil, `name "a}"`},
		{"colon in name", c, []limiter.Rule{{Name: "a:b", Algorithm: ok}}, nil, `name "a:b"`},
		{"duplicate", c, []limiter.Rule{{Name: "a", Algorithm: ok}, {Name: "a", Algorithm: ok}}, nil, `rule "a": duplicate`},
		{"nil algorithm", c, []limiter.Rule{{Name: "a"}}, nil, `rule "a": invalid algorithm: no algorithm`},
		{"nil pointer algorithm", c, []limiter.Rule{{Name: "a", Algorithm: (*algorithms.TokenBucket)(nil)}}, nil, `rule "a": invalid algorithm: *algorithms.TokenBucket is a pointer`},
		{"bad algorithm", c, []limiter.Rule{{Name: "per-ip", Algorithm: algorithms.GCRA{Rate: 0, Period: time.Second, Burst: 1}}}, nil, `rule "per-ip": invalid algorithm: GCRA.Rate must be positive`},
		{"bad prefix", c, []limiter.Rule{{Name: "a", Algorithm: ok}}, []any{limiter.WithPrefix("x{")}, "prefix"},
		{"bad timeout", c, []limiter.Rule{{Name: "a", Algorithm: ok}}, []any{redisstore.WithTimeout(0)}, "timeout"},
		{"nil clock", c, []limiter.Rule{{Name: "a", Algorithm: ok}}, []any{limiter.WithClock(nil)}, "clock"},
		{"negative min TTL", c, []limiter.Rule{{Name: "a", Algorithm: ok}}, []any{redisstore.WithMinTTL(-1)}, "WithMinTTL: negative"},
	} {
		_, err := ruletest.Build(tc.rdb, tc.rules, tc.opts...)
		if !errors.Is(err, ratelimit.ErrConfig) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want ErrConfig mentioning %q", tc.name, err, tc.want)
		}
	}
}

// A fixed window multiplies nothing by its limit: 10,000 a month and
// 3,000,000 an hour decide exactly, on every backend, at a large
// timestamp.
func TestLongFixedWindows(t *testing.T) {
	for _, b := range redistest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			rules := []limiter.Rule{
				{Name: "monthly", Algorithm: algorithms.FixedWindow{Limit: 10_000, Window: 30 * 24 * time.Hour}},
				{Name: "hourly", Algorithm: algorithms.FixedWindow{Limit: 3_000_000, Window: time.Hour}},
			}
			lim, err := ruletest.Build(b.Client, rules, fixedClock(bases[len(bases)-1]), limiter.WithPrefix("long"))
			if err != nil {
				t.Fatal(err)
			}
			for _, tc := range []struct {
				rule    string
				cost    int
				allowed bool
				left    int
			}{
				{"monthly", 9_999, true, 1},
				{"monthly", 1, true, 0},
				{"monthly", 1, false, 0},
				{"hourly", 2_999_999, true, 1},
				{"hourly", 2, false, 1},
				{"hourly", 1, true, 0},
			} {
				d, err := lim.Decide(ctx, limiter.Check{Rule: tc.rule, Identity: "u", Cost: tc.cost})
				if err != nil {
					t.Fatal(err)
				}
				r := d.Results[0]
				if r.Allowed != tc.allowed || r.Remaining != tc.left {
					t.Errorf("%s cost %d: allowed %v, %d left; want %v, %d left", tc.rule, tc.cost, r.Allowed, r.Remaining, tc.allowed, tc.left)
				}
				if !r.Allowed && (r.RetryAfter <= 0 || r.RetryAfter > rules[0].Algorithm.(algorithms.FixedWindow).Window) {
					t.Errorf("%s refusal: retry after %v, want within the window", tc.rule, r.RetryAfter)
				}
			}
		})
	}
}
