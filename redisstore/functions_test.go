package redisstore_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/redistest"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/ruletest"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/redisstore"
)

// calls returns how many times the server ran cmd (INFO commandstats).
func calls(t *testing.T, rdb *redis.Client, cmd string) int {
	t.Helper()
	info, err := rdb.Info(ctx, "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(info, "\r\n") {
		if rest, ok := strings.CutPrefix(line, "cmdstat_"+cmd+":calls="); ok {
			n := 0
			for _, c := range rest {
				if c < '0' || c > '9' {
					break
				}
				n = n*10 + int(c-'0')
			}
			return n
		}
	}
	return 0
}

// On Redis 7 the store calls functions: it loads the library on first
// use, under a name that carries its hash, and again after FUNCTION FLUSH
// (a restart without persistence), with no decision lost or repeated;
// WithFunctions(false) keeps to EVALSHA.
func TestRedisFunctions(t *testing.T) {
	s := redistest.Start(t)
	rules := []limiter.Rule{{Name: "r", Algorithm: algorithms.FixedWindow{Limit: 10, Window: time.Hour}}}
	lim, err := ruletest.Build(s.Client, rules, limiter.WithPrefix("fn"))
	if err != nil {
		t.Fatal(err)
	}
	libs, err := s.Client.FunctionList(ctx, redis.FunctionListQuery{}).Result()
	if err != nil || len(libs) != 0 {
		t.Fatalf("libraries before the first decision: %v %v, want none (loaded lazily)", libs, err)
	}
	for i := range 3 {
		if d, err := lim.Allow(ctx, "r", "x"); err != nil || d.Results[0].Remaining != 9-i {
			t.Fatalf("decision %d: %+v %v", i, d, err)
		}
		if i == 1 {
			if err := s.Client.FunctionFlush(ctx).Err(); err != nil {
				t.Fatal(err)
			}
		}
	}
	libs, _ = s.Client.FunctionList(ctx, redis.FunctionListQuery{}).Result()
	if len(libs) != 1 || !strings.HasPrefix(libs[0].Name, "ratelimit_") || len(libs[0].Functions) != 6 {
		t.Errorf("libraries %+v, want one ratelimit_<hash> with 6 functions", libs)
	}
	// 3 decisions; the first and the one after the flush were answered
	// "Function not found" (nothing ran) and sent again once loaded.
	if got := calls(t, s.Client, "fcall"); got != 5 {
		t.Errorf("%d FCALLs, want 5", got)
	}
	if got := calls(t, s.Client, "evalsha"); got != 0 {
		t.Errorf("%d EVALSHAs, want none", got)
	}

	scripts, err := ruletest.Build(s.Client, rules, limiter.WithPrefix("fn"), redisstore.WithFunctions(false))
	if err != nil {
		t.Fatal(err)
	}
	if d, err := scripts.Allow(ctx, "r", "x"); err != nil || d.Results[0].Remaining != 6 {
		t.Fatalf("with scripts: %+v %v, want the same state", d, err)
	}
	if got := calls(t, s.Client, "evalsha"); got != 1 {
		t.Errorf("%d EVALSHAs with WithFunctions(false), want 1", got)
	}
}

// Right after FUNCTION FLUSH, 64 goroutines decide at once, alone or in
// batches; whichever call is answered "Function not found" (nothing ran;
// a batch gives each of its calls that answer, see
// script.TestBatchWithoutLibrary) loads the library and is decided again:
// every decision succeeds and exactly the limit is admitted, with the
// library flushed three times along the way.
func TestBatchAfterFunctionFlush(t *testing.T) {
	s := redistest.Start(t)
	lim, err := ruletest.Build(s.Client, []limiter.Rule{{Name: "r", Algorithm: algorithms.FixedWindow{Limit: 150, Window: time.Hour}}},
		redisstore.WithTimeout(10*time.Second), limiter.WithDenyCache(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	admitted := int64(0)
	for range 3 {
		if err := s.Client.FunctionFlush(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		admitted += ruletest.Hammer(t, 64, 1, func() (limiter.Decision, error) { return lim.Allow(ctx, "r", "hot") })
	}
	if admitted != 150 {
		t.Errorf("admitted %d of 192, want exactly 150", admitted)
	}
}

// An ACL that refuses the limiter's keys fails its decisions (ErrBackend,
// NOPERM) but does not turn functions off: once the ACL is fixed, every
// decision is an FCALL, none an EVALSHA.
func TestKeysRefusedKeepFunctions(t *testing.T) {
	s := redistest.Start(t)
	if err := s.Client.Do(ctx, "ACL", "SETUSER", "app", "on", ">pw", "+@all", "~other:*").Err(); err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(&redis.Options{Addr: s.Addr, Username: "app", Password: "pw"})
	defer rdb.Close()
	lim, err := ruletest.Build(rdb, []limiter.Rule{{Name: "r", Algorithm: algorithms.FixedWindow{Limit: 10, Window: time.Hour}}}, limiter.WithDenyCache(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lim.Allow(ctx, "r", "x"); !errors.Is(err, limiter.ErrBackend) || !strings.Contains(err.Error(), "NOPERM") {
		t.Fatalf("keys refused: %v, want ErrBackend with NOPERM", err)
	}
	if err := s.Client.Do(ctx, "ACL", "SETUSER", "app", "allkeys").Err(); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if d, err := lim.Allow(ctx, "r", "x"); err != nil || d.Results[0].Remaining != 9-i {
			t.Fatalf("decision %d once the ACL allows the keys: %+v %v", i, d, err)
		}
	}
	if got := calls(t, s.Client, "evalsha") + calls(t, s.Client, "eval"); got != 0 {
		t.Errorf("%d script runs once the ACL was fixed, want none (functions)", got)
	}
}
