package denycache

import (
	"strconv"
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/store"
)

func stackOf(identity string) []store.Check {
	return []store.Check{{Key: store.Key{Prefix: "p", Rule: "r", Identity: identity, Suffix: "fw"}, Params: "fw:1:60000000:0", Cost: 1}}
}

func never(int) bool { return false }

// TestPutAgainKeepsOthers: a stack's denial cached again (concurrent
// requests of one denied client each bring the store's answer back) takes
// no room: it must not push another client's denial out of a full shard.
// Map order is random, so the case is tried on many caches.
func TestPutAgainKeepsOthers(t *testing.T) {
	now := time.Now()
	for round := range 200 {
		c := New[int](32, time.Hour) // two entries a shard
		// Two stacks of one shard: among 17, two share one of the 16.
		seen := map[*shard[int]][][]store.Check{}
		var a, b []store.Check
		for i := 0; i < 17 && a == nil; i++ {
			checks := stackOf(strconv.Itoa(i))
			id := c.stackOf(checks)
			sh := c.shard(id)
			if prev := seen[sh]; len(prev) > 0 {
				a, b = prev[0], checks
			}
			seen[sh] = append(seen[sh], checks)
		}
		ta, _, _, _ := c.Lookup(a, never, now)
		tb, _, _, _ := c.Lookup(b, never, now)
		c.Put(ta, a, time.Minute, 1)
		c.Put(tb, b, time.Minute, 2)
		c.Put(ta, a, time.Minute, 1) // the same client's second request
		if _, v, _, found := c.Lookup(b, never, now); !found || v != 2 {
			t.Fatalf("round %d: the other denial is gone from a shard holding two (found %v, %d)", round, found, v)
		}
		if _, v, _, found := c.Lookup(a, never, now); !found || v != 1 {
			t.Fatalf("round %d: the denial cached again is gone (found %v, %d)", round, found, v)
		}
	}
}

// TestLiveCountsEntries: a Lookup in an empty cache does not identify its
// stack, which the Put of its denial then does; the count of entries that
// lets a Lookup skip that work follows puts, puts again, expiries and
// evictions, so a denial is never missed for a count of 0.
func TestLiveCountsEntries(t *testing.T) {
	now := time.Now()
	c := New[int](16, time.Hour) // one entry a shard
	a := stackOf("a")
	ta, _, _, found := c.Lookup(a, never, now)
	if found || ta.hashed || !ta.OK {
		t.Fatalf("an empty cache: found %v, hashed %v, ok %v", found, ta.hashed, ta.OK)
	}
	c.Put(ta, a, time.Second, 1)
	c.Put(ta, a, time.Second, 1)
	if n := c.live.Load(); n != 1 {
		t.Fatalf("one stack put twice: %d entries counted", n)
	}
	if _, v, _, found := c.Lookup(a, never, now); !found || v != 1 {
		t.Fatalf("the denial put after a Lookup that did not identify it: found %v, %d", found, v)
	}
	if _, _, _, found := c.Lookup(a, never, now.Add(time.Second)); found {
		t.Fatal("a denial found past its wait")
	}
	if n := c.live.Load(); n != 0 {
		t.Fatalf("an expired denial dropped: %d entries counted", n)
	}
	for i := range 100 { // evictions in full shards
		checks := stackOf(strconv.Itoa(i))
		tk, _, _, _ := c.Lookup(checks, never, now)
		c.Put(tk, checks, time.Minute, i)
	}
	n := 0
	for i := range c.shards {
		n += len(c.shards[i].entries)
	}
	if got := c.live.Load(); got != int64(n) {
		t.Fatalf("after evictions: %d entries counted, %d held", got, n)
	}
}
