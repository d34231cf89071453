package redisstore_test

import (
	"errors"
	"fmt"
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

// Through go-redis's AutoPipeliner on a 3-master cluster (WithCluster),
// the library reaches every master that a decision goes to: a decision
// whose master has no library loads it there and is decided again, with
// functions forced and by default, each time after FUNCTION FLUSH on
// every master. The AutoPipeliner names no master, and a FUNCTION LOAD
// sent through it goes to the master that the cluster client picks, in
// turn, for a command without a key: a decision whose master was not the
// next in turn failed "Function not found" (each flush here had one).
func TestAutoPipelinerClusterLoadsEveryMaster(t *testing.T) {
	c := redistest.StartCluster(t, 3, 0)
	ap, err := c.Client.AutoPipeline()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ap.Close() })
	rule := limiter.Rule{Name: "r", Algorithm: algorithms.FixedWindow{Limit: 100, Window: time.Hour}}
	// An identity whose key is on each master (by its hash tag, {r:id},
	// whatever the prefix).
	ids := map[*redistest.Server]string{}
	for i := 0; len(ids) < 3 && i < 1000; i++ {
		id := fmt.Sprint("id-", i)
		m, _ := c.MasterOf(t, "ratelimit:{r:"+id+"}:"+ruletest.KeySuffix(rule.Algorithm))
		if _, ok := ids[m]; !ok {
			ids[m] = id
		}
	}
	if len(ids) != 3 {
		t.Fatalf("identities on %d masters, want 3", len(ids))
	}
	for _, mode := range []struct {
		name string
		opts []any
	}{{"functions", []any{redisstore.WithFunctions(true)}}, {"auto", nil}} {
		t.Run(mode.name, func(t *testing.T) {
			for flush := range 3 {
				for m := range ids {
					if err := m.Client.FunctionFlush(ctx).Err(); err != nil {
						t.Fatal(err)
					}
				}
				prefix := fmt.Sprint(mode.name, flush)
				opts := append([]any{redisstore.WithCluster(), redisstore.WithTimeout(5 * time.Second), limiter.WithDenyCache(0, 0), limiter.WithPrefix(prefix)}, mode.opts...)
				lim, err := ruletest.Build(ap, []limiter.Rule{rule}, opts...)
				if err != nil {
					t.Fatal(err)
				}
				for round := range 2 {
					for m, id := range ids {
						if d, err := lim.Allow(ctx, "r", id); err != nil || d.Results[0].Remaining != 99-round {
							t.Errorf("flush %d, round %d, %s on %s: %+v %v", flush, round, id, m.Addr, d, err)
						}
					}
				}
				for m := range ids {
					libs, err := m.Client.FunctionList(ctx, redis.FunctionListQuery{}).Result()
					if err != nil || len(libs) != 1 || !strings.HasPrefix(libs[0].Name, "ratelimit_") {
						t.Errorf("flush %d, libraries on %s: %+v %v, want ratelimit_<hash>", flush, m.Addr, libs, err)
					}
				}
			}
			for m := range ids {
				if got := calls(t, m.Client, "evalsha") + calls(t, m.Client, "eval"); got != 0 {
					t.Errorf("%d script runs on %s, want none (functions)", got, m.Addr)
				}
			}
		})
	}
}
