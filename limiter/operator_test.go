package limiter_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/store"
)

// TestOperatorControls runs operatorTable on every store.
func TestOperatorControls(t *testing.T) {
	for name, store := range everyStore(t) {
		t.Run(name, func(t *testing.T) { operatorTable(t, store, fmt.Sprintf("op%d", time.Now().UnixNano())) })
	}
}

// operatorTable runs the operator controls against store, with a clock
// moved by hand: a login rule of 3 a minute with a 10-minute penalty, and
// an api rule of 5 a minute that honours blocks.
func operatorTable(t *testing.T, store store.Store, prefix string) {
	now := bases[0]
	rules := []limiter.Rule{
		{Name: "login", Algorithm: algorithms.FixedWindow{Limit: 3, Window: time.Minute}, Penalty: 10 * time.Minute},
		{Name: "api", Algorithm: algorithms.SlidingWindow{Limit: 5, Window: time.Minute}, Blockable: true},
		{Name: "plain", Algorithm: algorithms.GCRA{Rate: 1, Period: time.Minute, Burst: 1}},
		{Name: "hourly", Algorithm: algorithms.FixedWindow{Limit: 3, Window: time.Hour}, Blockable: true},
	}
	opts := []limiter.Option{limiter.WithClock(func() time.Time { return now }), limiter.WithPrefix(prefix), limiter.WithDenyCache(100, time.Hour)}
	lim := newLimiter(t, store, rules, opts...)
	// Another instance: its Unblock and Reset reach lim's deny cache at once.
	admin := newLimiter(t, store, rules, opts...)
	type want struct {
		allowed, blocked bool
		remaining        int
		retry            time.Duration
	}
	check := func(step string, d limiter.Decision, err error, w want) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		r := d.Results[0]
		got := want{d.Allowed, r.Blocked, r.Remaining, r.RetryAfter}
		if got != w {
			t.Errorf("%s: got %+v, want %+v", step, got, w)
		}
	}
	for i := range 3 {
		d, err := lim.Allow(ctx, "login", "mallory")
		check(fmt.Sprintf("login %d", i+1), d, err, want{true, false, 2 - i, 0})
	}
	d, err := lim.Allow(ctx, "login", "mallory")
	check("4th login: denied, and blocked for the penalty", d, err, want{false, true, 0, 10 * time.Minute})
	now = now.Add(2 * time.Minute) // a new window: the block outlasts it
	d, err = lim.Allow(ctx, "login", "mallory")
	check("after the window", d, err, want{false, true, 0, 8 * time.Minute})
	d, err = lim.Status(ctx, "login", "mallory")
	check("status", d, err, want{false, true, 0, 8 * time.Minute})
	if err := admin.Unblock(ctx, "login", "mallory"); err != nil {
		t.Fatal(err)
	}
	d, err = lim.Allow(ctx, "login", "mallory")
	check("unblocked by another instance", d, err, want{true, false, 2, 0})

	for range 5 {
		if d, err := lim.Allow(ctx, "api", "bob"); err != nil || !d.Allowed {
			t.Fatalf("api: %+v %v", d, err)
		}
	}
	d, err = lim.Allow(ctx, "api", "bob")
	check("api over its limit: denied, no penalty", d, err, want{false, false, 0, 60*time.Second + time.Millisecond})
	if err := admin.Block(ctx, "api", "bob", time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := admin.Block(ctx, "api", "bob", time.Minute); err != nil { // shorter: the hour stays
		t.Fatal(err)
	}
	d, err = lim.Allow(ctx, "api", "bob")
	check("blocked for an hour", d, err, want{false, true, 0, time.Hour})
	d, err = lim.Allow(ctx, "api", "alice")
	check("others unaffected", d, err, want{true, false, 4, 0})
	if err := admin.Reset(ctx, "api", "bob"); err != nil {
		t.Fatal(err)
	}
	d, err = lim.Allow(ctx, "api", "bob")
	check("reset: counters and block gone", d, err, want{true, false, 4, 0})

	// A block shorter than the rule's own wait: RetryAfter is when a
	// request would be admitted, the longer of the two.
	for range 3 {
		if d, err := lim.Allow(ctx, "hourly", "eve"); err != nil || !d.Allowed {
			t.Fatalf("hourly: %+v %v", d, err)
		}
	}
	if err := admin.Block(ctx, "hourly", "eve", time.Minute); err != nil {
		t.Fatal(err)
	}
	hourLeft := func() time.Duration { // to the window's end, rounded up to the ms
		return (now.Truncate(time.Hour).Add(time.Hour).Sub(now) + time.Millisecond - 1).Truncate(time.Millisecond)
	}
	d, err = lim.Allow(ctx, "hourly", "eve")
	check("blocked a minute, the hour used up", d, err, want{false, true, 0, hourLeft()})
	now = now.Add(time.Minute)
	uncached := newLimiter(t, store, rules, append(opts, limiter.WithDenyCache(0, 0))...)
	d, err = uncached.Allow(ctx, "hourly", "eve")
	check("block over, the hour still used up", d, err, want{false, false, 0, hourLeft()})

	for _, tc := range []struct {
		name string
		err  error
	}{
		{"not blockable", admin.Block(ctx, "plain", "bob", time.Hour)},
		{"no duration", admin.Block(ctx, "api", "bob", 0)},
		{"unknown rule", admin.Reset(ctx, "nope", "bob")},
		{"empty identity", admin.Unblock(ctx, "api", "")},
	} {
		if !errors.Is(tc.err, limiter.ErrCheck) {
			t.Errorf("%s: %v, want ErrCheck", tc.name, tc.err)
		}
	}
}
