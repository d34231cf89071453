package transport

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/redistest"
)

// The Coalescers of servers that no longer serve keys are dropped: a ring
// whose one shard is replaced, server after server, as masters are over a
// long life, leaves Nodes with the Coalescer of the last server only.
func TestNodesDropServersGone(t *testing.T) {
	ctx := context.Background()
	var addrs []string
	for range 5 {
		m, _ := redistest.Mini(t)
		addrs = append(addrs, m.Addr())
	}
	r := redis.NewRing(&redis.RingOptions{Addrs: map[string]string{"s": addrs[0]}, MaxRetries: -1})
	t.Cleanup(func() { _ = r.Close() })
	n := RingNodes(r, time.Second)
	for i, addr := range addrs {
		r.SetAddrs(map[string]string{"s": addr})
		cmd := redis.NewCmd(ctx, "eval", "return 1", 1, "k")
		if err := n.Process(ctx, cmd); err != nil {
			t.Fatalf("server %d: %v", i, err)
		}
	}
	var kept []string
	for range 5000 { // the sweeps run in the background: bounded wait, 5 s at most
		kept = kept[:0]
		n.nodes.Range(func(addr, _ any) bool {
			kept = append(kept, addr.(string))
			return true
		})
		if len(kept) == 1 && n.sweeps.Load() == 0 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if !slices.Equal(kept, addrs[4:]) {
		t.Errorf("Coalescers kept for %v, want the last server's only (%s)", kept, addrs[4])
	}
}
