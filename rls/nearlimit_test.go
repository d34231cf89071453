package rls_test

import (
	"errors"
	"testing"

	"github.com/seed-bff0c9e1/ratelimit"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/memstore"
	"github.com/seed-bff0c9e1/ratelimit/rls"
)

// TestNearLimitRatio: Options.NearLimitRatio (the reference's
// NEAR_LIMIT_RATIO) moves where near_limit starts counting: a limit of 10
// at 0.5 is near from its 6th unit, where the default (0.8) counts from
// the 9th. A ratio outside 0 to 1 is an error.
func TestNearLimitRatio(t *testing.T) {
	ip := ruleNames(t, metricsConfig)[0]
	for _, tc := range []struct {
		ratio float64
		near  float64
	}{{0, 2}, {0.5, 5}, {1, 0}} {
		reg, m := metricsOn(t)
		c := serve(t, miniBackend(t), metricsConfig, rls.Options{Metrics: m, NearLimitRatio: tc.ratio})
		same(t, "ten", summary(ask(t, c, hits(desc("remote_address", "a"), 10))), []any{ok, ok, uint32(0)})
		if got := series(t, reg)["ratelimit_rls_near_limit_total"][ip]; got != tc.near {
			t.Errorf("ratio %v: near_limit %v after 10 of 10, want %v", tc.ratio, got, tc.near)
		}
	}
	c, err := rls.Parse("test.yaml", []byte(metricsConfig))
	if err != nil {
		t.Fatal(err)
	}
	lim, err := limiter.New(memstore.Must(), rls.Limits(c))
	if err != nil {
		t.Fatal(err)
	}
	defer lim.Close()
	for _, r := range []float64{-0.1, 1.5} {
		if _, err := rls.NewServer(lim, []*rls.Config{c}, rls.Options{NearLimitRatio: r}); !errors.Is(err, ratelimit.ErrConfig) {
			t.Errorf("ratio %v: %v, want ErrConfig", r, err)
		}
	}
}
