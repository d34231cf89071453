package redisstore_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/ruletest"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/redisstore"
)

// attempts records, for each script call sent to a node on a key, the
// deadline it was sent with and the error it met.
type attempts struct {
	key   string
	mu    sync.Mutex
	sends []attempt
}

type attempt struct {
	deadline time.Time
	err      error
}

func (a attempt) String() string {
	return fmt.Sprintf("{%v %v}", time.Until(a.deadline).Round(time.Second), a.err)
}

func (a *attempts) DialHook(next redis.DialHook) redis.DialHook { return next }
func (a *attempts) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		a.record(ctx, cmd, err)
		return err
	}
}
func (a *attempts) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		for _, cmd := range cmds {
			a.record(ctx, cmd, cmd.Err())
		}
		return err
	}
}

func (a *attempts) record(ctx context.Context, cmd redis.Cmder, err error) {
	args := cmd.Args()
	if len(args) < 4 || args[3] != a.key || !strings.HasPrefix(strings.ToLower(args[0].(string)), "fcall") {
		return
	}
	d, _ := ctx.Deadline()
	a.mu.Lock()
	a.sends = append(a.sends, attempt{d, err})
	a.mu.Unlock()
}

// A call that a master refuses because its slot moved (MOVED) goes once
// more through the cluster client within the call's deadline: the store's
// timeout from when the decision reached it, not a second timeout from
// the refusal.
func TestRedirectWithinTheCallsDeadline(t *testing.T) {
	c := sharedCluster(t)
	rule := limiter.Rule{Name: "r", Algorithm: algorithms.FixedWindow{Limit: 10, Window: time.Hour}}
	key := "ratelimit:{r:mover}:" + ruletest.KeySuffix(rule.Algorithm)
	a := &attempts{key: key}
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
	a.sends = nil
	a.mu.Unlock()
	if d, err := lim.Allow(ctx, "r", "mover"); err != nil || !d.Allowed {
		t.Fatalf("after the move: %+v %v", d, err)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	n := len(a.sends)
	if n < 2 || a.sends[0].err == nil || !strings.HasPrefix(a.sends[0].err.Error(), "MOVED ") || a.sends[n-1].err != nil {
		t.Fatalf("sends %v, want the first refused with MOVED and the last run", a.sends)
	}
	for _, again := range a.sends[1:] {
		if first := a.sends[0].deadline; again.deadline.After(first) {
			t.Errorf("a redirected send's deadline is %v after the call's own", again.deadline.Sub(first))
		}
	}
}
