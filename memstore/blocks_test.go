package memstore_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/redistest"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
)

// TestBlocksShorterThanAMicrosecond: a Penalty or a Block of less than a
// microsecond (the stores' unit) blocks as one of a microsecond does, on
// the Lua scripts as in the Go model: a denial reports Blocked on both,
// and Unblock finds the block on both.
func TestBlocksShorterThanAMicrosecond(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, d := range []time.Duration{500 * time.Nanosecond, time.Microsecond, 1500 * time.Nanosecond} {
		rules := []limiter.Rule{{Name: "r", Algorithm: algorithms.FixedWindow{Limit: 1, Window: time.Second}, Penalty: d}}
		lua, mod, _, _ := luaAndModel(t, s.Client, &now, "submicro", rules)
		for i := range 3 {
			got, err := lua.Allow(ctx, "r", "x")
			if err != nil {
				t.Fatal(err)
			}
			want, _ := mod.Allow(ctx, "r", "x")
			if shown(got) != shown(want) {
				t.Errorf("penalty %v, request %d:\nlua   %v\nmodel %v", d, i, shown(got), shown(want))
			}
			if i > 0 && !got.Results[0].Blocked {
				t.Errorf("penalty %v, request %d: a denial did not block", d, i)
			}
		}
		for _, lim := range []*limiter.Limiter{lua, mod} {
			if err := lim.Unblock(ctx, "r", "x"); err != nil {
				t.Errorf("penalty %v: Unblock: %v", d, err)
			}
		}
		var errs []string
		for _, lim := range []*limiter.Limiter{lua, mod} {
			if err := lim.Block(ctx, "r", "x", d); err != nil {
				t.Fatal(err)
			}
			errs = append(errs, fmt.Sprint(lim.Unblock(ctx, "r", "x")))
		}
		if errs[0] != "<nil>" || errs[1] != "<nil>" {
			t.Errorf("Block(%v) then Unblock: lua %s, model %s; want both to find the block", d, errs[0], errs[1])
		}
	}
}
