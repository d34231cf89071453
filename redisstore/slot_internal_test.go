package redisstore

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/redistest"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/memstore"
	"github.com/seed-bff0c9e1/ratelimit/store"
)

// recording is a store that keeps the name of every key it is asked to
// decide on, state keys and block keys.
type recording struct {
	store.Store
	mu   sync.Mutex
	keys []store.Key
}

func (r *recording) Decide(ctx context.Context, now time.Time, checks []store.Check, results []store.Result) (store.Verdict, error) {
	r.mu.Lock()
	for _, c := range checks {
		r.keys = append(r.keys, c.Key)
		if c.Blocks != (store.Key{}) {
			r.keys = append(r.keys, c.Blocks)
		}
	}
	r.mu.Unlock()
	return r.Store.Decide(ctx, now, checks, results)
}

// TestStacksSplitByRedisOwnSlots: on a cluster the store splits a stack by
// the hash slot it computes from each key's parts, without building its
// name. The split must be Redis's own: two keys are decided together iff
// CLUSTER KEYSLOT of their full names is the same. The keys are the ones a
// limiter names, for rules of several algorithms and names (one taking
// blocks) and identities with braces, colons, blanks, long and hashed
// values, and 300 more so that keys of different hash tags share
// a slot (dozens of them).
func TestStacksSplitByRedisOwnSlots(t *testing.T) {
	srv := redistest.Start(t, "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf")
	rules := []limiter.Rule{
		{Name: "per-ip", Algorithm: algorithms.FixedWindow{Limit: 10, Window: time.Minute}},
		{Name: "api.v2", Algorithm: algorithms.GCRA{Rate: 5, Period: time.Second, Burst: 5}, Blockable: true},
		{Name: "a", Algorithm: algorithms.SlidingWindow{Limit: 3, Window: time.Hour}},
		{Name: "Z_9-" + strings.Repeat("r", 60), Algorithm: algorithms.TokenBucket{Capacity: 4, Rate: 1, Period: time.Second}},
	}
	rec := &recording{Store: memstore.Must()}
	lim, err := limiter.New(rec, rules, limiter.WithPrefix("svc:rl-1"))
	if err != nil {
		t.Fatal(err)
	}
	ids := []string{"1.2.3.4", "::1", "user:42", ":", "::", " ", "#", "{", "}", "{}", "}{", "{user}", "a{b}c",
		"{a}:{b}", "tenant:{acme}", "naïve", "user@example.com", "a/b+c=d", strings.Repeat("x", 64),
		strings.Repeat("y", 65), strings.Repeat("{", 300), strings.Repeat(":", 64)}
	for i := range 300 {
		ids = append(ids, fmt.Sprintf("u%d", i))
	}
	for _, r := range rules {
		for _, id := range ids {
			if _, err := lim.Decide(context.Background(), limiter.Check{Rule: r.Name, Identity: id, Cost: 1}); err != nil {
				t.Fatalf("%s %q: %v", r.Name, id, err)
			}
		}
	}

	// Redis's slot of each key's full name.
	pipe := srv.Client.Pipeline()
	cmds := make([]*redis.IntCmd, len(rec.keys))
	for i, k := range rec.keys {
		cmds[i] = pipe.ClusterKeySlot(context.Background(), k.String())
	}
	if _, err := pipe.Exec(context.Background()); err != nil {
		t.Fatalf("CLUSTER KEYSLOT: %v", err)
	}
	slot := make([]int64, len(cmds))
	tags := map[int64]map[string]bool{} // by slot: the hash tags on it
	for i, c := range cmds {
		slot[i] = c.Val()
		if tags[slot[i]] == nil {
			tags[slot[i]] = map[string]bool{}
		}
		tags[slot[i]][rec.keys[i].Rule+":"+rec.keys[i].Identity] = true
	}
	shared := 0
	for _, on := range tags {
		shared += len(on) - 1
	}
	t.Logf("%d keys; %d hash tags share a slot with another", len(rec.keys), shared)
	if shared < 10 {
		t.Fatalf("only %d hash tags share a slot with another: too few to tell a split by slot from one by tag", shared)
	}

	checks := make([]store.Check, len(rec.keys))
	for i, k := range rec.keys {
		checks[i] = store.Check{Key: k}
	}
	s := &redisStore{shards: bySlot}
	groups := s.shardGroups(checks)
	var wrong []string
	groupOf := map[int64]int{} // by slot: the group of its first key
	in := 0
	for g, members := range groups {
		in += len(members)
		for _, i := range members {
			first := members[0]
			if other, ok := groupOf[slot[i]]; ok && other != g {
				wrong = append(wrong, fmt.Sprintf("%s (slot %d) decided apart from %s of the same slot", rec.keys[i], slot[i], rec.keys[groups[other][0]]))
			} else if slot[i] != slot[first] {
				wrong = append(wrong, fmt.Sprintf("%s (slot %d) decided with %s (slot %d)", rec.keys[i], slot[i], rec.keys[first], slot[first]))
			}
			groupOf[slot[i]] = g
		}
	}
	if in != len(checks) {
		t.Errorf("the groups hold %d keys of %d", in, len(checks))
	}
	if len(wrong) > 0 {
		t.Errorf("%d of %d keys split otherwise than by CLUSTER KEYSLOT, such as:\n%s", len(wrong), len(checks), strings.Join(wrong[:min(5, len(wrong))], "\n"))
	}
}
