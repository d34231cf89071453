package redisstore_test

import (
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/redistest"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/ruletest"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/redisstore"
)

// A decision whose reply is lost may have run in Redis; go-redis's own
// retries (MaxRetries, 3 by default) must not run it again. Under CLIENT
// KILL churn, what Redis consumed never exceeds what was admitted plus the
// errors reported for calls that reached Redis (each may or may not have
// consumed; decisions skipped while Redis was marked down did not).
func TestNoDoubleChargeUnderConnectionChurn(t *testing.T) {
	s := redistest.Start(t)
	rdb := redis.NewClient(&redis.Options{Addr: s.Addr}) // go-redis's default retries
	defer rdb.Close()
	alg := algorithms.FixedWindow{Limit: 1_000_000, Window: time.Hour}
	lim, err := ruletest.Build(rdb, []limiter.Rule{{Name: "r", Algorithm: alg}},
		redisstore.WithTimeout(time.Second), limiter.WithRetryInterval(time.Millisecond)) // keep deciding through the churn
	if err != nil {
		t.Fatal(err)
	}
	var admitted, failed atomic.Int64
	var stop atomic.Bool
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for n := 0; n < 20_000 && !stop.Load(); n++ {
				d, err := lim.Allow(ctx, "r", "churn")
				switch {
				case errors.Is(err, limiter.ErrUnavailable): // never sent: consumed nothing
					time.Sleep(100 * time.Microsecond)
				case err != nil:
					failed.Add(1)
				case d.Allowed:
					admitted.Add(1)
				}
			}
		})
	}
	kills := 0
	for deadline := time.Now().Add(1500 * time.Millisecond); time.Now().Before(deadline); kills++ {
		if err := s.Client.Do(ctx, "CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes").Err(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Millisecond)
	}
	stop.Store(true)
	wg.Wait()
	v, err := s.Client.Get(ctx, "ratelimit:{r:churn}:"+ruletest.KeySuffix(alg)).Result()
	if err != nil {
		t.Fatal(err)
	}
	_, count, _ := strings.Cut(v, ":")
	consumed, err := strconv.ParseInt(count, 10, 64)
	if err != nil {
		t.Fatal(v, err)
	}
	t.Logf("%d CLIENT KILLs: admitted %d, errors %d, consumed in Redis %d", kills, admitted.Load(), failed.Load(), consumed)
	if failed.Load() == 0 {
		t.Fatal("no connection was broken mid-call: the test proves nothing")
	}
	if consumed > admitted.Load()+failed.Load() || consumed < admitted.Load() {
		t.Errorf("consumed %d, admitted %d, errors %d: want admitted <= consumed <= admitted + errors", consumed, admitted.Load(), failed.Load())
	}
}
