package grpclimit_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/grpclimit"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
)

// A call's stack of a per-key and a global rule is one script run on a
// real redis-server: as many FCALL or EVALSHA calls as calls, admitted or
// refused.
func TestOneRoundTripPerCall(t *testing.T) {
	srv := startRedis(t)
	rdb := redis.NewClient(&redis.Options{Addr: srv.addr})
	defer rdb.Close()
	rules := []grpclimit.Rule{
		{Rule: limiter.Rule{Name: "per-key", Algorithm: algorithms.SlidingWindow{Limit: 2, Window: time.Hour}}, Identity: grpclimit.Metadata("x-api-key")},
		{Rule: limiter.Rule{Name: "global", Algorithm: algorithms.GCRA{Rate: 100, Period: time.Second, Burst: 100}}, Identity: grpclimit.Constant("all")},
	}
	cc, _ := serve(t, newServer(t, onRedis(t, srv.addr), rules), pipe)
	if err := rdb.ConfigResetStat(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	const calls = 4 // 2 admitted, 2 refused
	for range calls {
		_, _ = call(cc, "alice")
	}
	info, err := rdb.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	runs := 0
	for line := range strings.SplitSeq(info, "\r\n") {
		for _, cmd := range []string{"fcall", "evalsha", "eval"} {
			if rest, ok := strings.CutPrefix(line, "cmdstat_"+cmd+":calls="); ok {
				n, _ := strconv.Atoi(rest[:strings.IndexByte(rest, ',')])
				runs += n
			}
		}
	}
	if runs != calls {
		t.Errorf("%d script runs for %d calls, want one each:\n%s", runs, calls, info)
	}
}
