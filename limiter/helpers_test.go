package limiter_test

import (
	"context"
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/redistest"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/memstore"
	"github.com/seed-bff0c9e1/ratelimit/redisstore"
	"github.com/seed-bff0c9e1/ratelimit/store"
)

// mustStore is a store from redisstore.New, or a panic.
func mustStore(s store.Store, err error) store.Store {
	if err != nil {
		panic(err)
	}
	return s
}

// ctx is the context of the tests' calls.
var ctx = context.Background()

// exactnessTimeout is for tests that count admissions or check results, not
// latency: a slow moment on a loaded machine must not fail them (a
// miniredis call compiles its script afresh, 15-20 ms under the race
// detector on an idle machine, near the default 100 ms when loaded).
var exactnessTimeout = redisstore.WithTimeout(5 * time.Second)

// The longest tests that count admissions on stores of their own (a
// memstore, and servers started for them) on a passed-in clock, with
// this timeout or a longer one, run in parallel with one another:
// TestLeasedRefusalWaitsNoLessThanTheStore, TestLeasesNeverOverAdmit,
// TestLeasesUnderAdmitWithinBound, TestMixedPlansAtOnce and
// TestPlanSwitchKeepsState. Tests of timeouts, retries, failures and
// real-clock waits stay serial.

// must is lim, or a panic.
func must(l *limiter.Limiter, err error) *limiter.Limiter {
	if err != nil {
		panic(err)
	}
	return l
}

// newLimiter is limiter.New; it fails t on an error.
func newLimiter(t testing.TB, store store.Store, rules []limiter.Rule, opts ...limiter.Option) *limiter.Limiter {
	t.Helper()
	lim, err := limiter.New(store, rules, opts...)
	if err != nil {
		t.Fatalf("limiter.New: %v", err)
	}
	return lim
}

// fixedClock decides at t.
func fixedClock(t time.Time) limiter.Option {
	return limiter.WithClock(func() time.Time { return t })
}

// bases are the instants the tables run from: today, and one far enough in
// the future that microsecond timestamps have 16 digits, near 2^53.
var bases = []time.Time{
	time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC),
	time.Date(2245, 1, 1, 0, 0, 0, 0, time.UTC),
}

// everyStore returns a fresh store of each kind the tests run on: the
// memstore, miniredis and, when available, a real redis-server.
func everyStore(t *testing.T) map[string]store.Store {
	stores := map[string]store.Store{"memstore": memstore.Must()}
	for _, b := range redistest.Backends(t) {
		stores[b.Name] = mustStore(redisstore.New(b.Client, redisstore.WithMinTTL(time.Hour), exactnessTimeout))
	}
	return stores
}
