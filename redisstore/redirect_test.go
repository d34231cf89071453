package redisstore_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/ruletest"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/redisstore"
)

// fcallOn keeps the function calls on key.
func fcallOn(key string) func(redis.Cmder) bool {
	return func(cmd redis.Cmder) bool {
		args := cmd.Args()
		return len(args) >= 4 && args[3] == key && strings.HasPrefix(strings.ToLower(fmt.Sprint(args[0])), "fcall")
	}
}

// A call that a master refuses because its slot moved (MOVED) goes once
// more through the cluster client within the call's deadline: the store's
// timeout from when the decision reached it, not a second timeout from
// the refusal.
func TestRedirectWithinTheCallsDeadline(t *testing.T) {
	c := sharedCluster(t)
	rule := limiter.Rule{Name: "r", Algorithm: algorithms.FixedWindow{Limit: 10, Window: time.Hour}}
	key := "ratelimit:{r:mover}:" + ruletest.KeySuffix(rule.Algorithm)
	a := &sends{keep: fcallOn(key)}
	cc := clusterWithHook(t, c, a)
	lim, err := ruletest.Build(cc, []limiter.Rule{rule}, redisstore.WithTimeout(time.Hour), limiter.WithDenyCache(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lim.Allow(ctx, "r", "mover"); err != nil { // the client reads the slots
		t.Fatal(err)
	}
	source, _ := c.MasterOf(t, key)
	target := c.Nodes[0]
	if target == source {
		target = c.Nodes[1]
	}
	slot := uint16(c.Client.ClusterKeySlot(ctx, key).Val())
	moveSlot(t, c, source, target, slot)
	t.Cleanup(func() { moveSlot(t, c, target, source, slot) }) // the shared cluster as it was
	a.mu.Lock()
	a.list = nil
	a.mu.Unlock()
	if d, err := lim.Allow(ctx, "r", "mover"); err != nil || !d.Allowed {
		t.Fatalf("after the move: %+v %v", d, err)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	n := len(a.list)
	if n < 2 || a.list[0].err == nil || !strings.HasPrefix(a.list[0].err.Error(), "MOVED ") || a.list[n-1].err != nil {
		t.Fatalf("sends %v, want the first refused with MOVED and the last run", a.list)
	}
	for _, again := range a.list[1:] {
		if first := a.list[0].deadline; again.deadline.After(first) {
			t.Errorf("a redirected send's deadline is %v after the call's own", again.deadline.Sub(first))
		}
	}
}
