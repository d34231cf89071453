// Package denycache remembers the stacks a store denied, until the
// earliest time they could be admitted but for at most a maximum age, so
// that a Limiter denies a denied client's repeated requests without a
// round trip (what a cached denial may change is stated where the Limiter
// uses it). It keeps what the Limiter gives it for a stack (its denial)
// and when; the Limiter turns it back into a Decision.
//
// A full shard replaces an arbitrary entry, so a crowd of denied clients
// cannot switch the cache off for newcomers. An operator's call made in
// this process (Changed) makes every entry cached before it stale.
package denycache

import (
	"hash/maphash"
	"sync"
	"sync/atomic"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/store"
)

// Cache holds denials of type V in 16 shards.
type Cache[V any] struct {
	seeds  [2]maphash.Seed
	shards [16]shard[V]
	max    int // entries per shard
	maxAge time.Duration
	// live counts the entries of every shard: while it is 0, a Lookup
	// finds nothing without identifying its stack, which only a Put then
	// needs (most stacks are never denied).
	live atomic.Int64
}

type shard[V any] struct {
	mu      sync.Mutex
	entries map[id]entry[V]
}

// id identifies a stack by two independent 64-bit hashes of its keys,
// parameters and costs: a collision between two live stacks (about
// 2^-128) is the only way one client could be denied by another's entry.
type id [2]uint64

type entry[V any] struct {
	at, until time.Time
	denial    V
	changes   uint64 // changes when its request was sent
}

// changes counts the operator's calls (Resets, Blocks, Unblocks) made in
// this process, by any Limiter: a denial cached before the latest one is
// not trusted, so an operator's call takes effect at once on the instance
// that made it (and within the cache's maximum age on the others).
var changes atomic.Uint64

// Changed counts an operator's call.
func Changed() { changes.Add(1) }

// New is a cache of about size entries, each kept at most maxAge.
func New[V any](size int, maxAge time.Duration) *Cache[V] {
	return &Cache[V]{seeds: [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}, max: max(1, size/16), maxAge: maxAge}
}

// Ticket is what caching a stack's denial needs: the stack (identified
// once a Lookup or Put needs it), when its request was sent, and the
// operator's calls then. OK is false for a stack that is not cached.
type Ticket struct {
	id      id
	hashed  bool // id is set
	sent    time.Time
	changes uint64
	OK      bool
}

// Lookup finds the denial of checks cached at now, and the time it was
// cached (found false for none), with
// the ticket to cache the store's answer with. A stack is not cached (a
// ticket that is not OK) when any check costs 0 or skip says so of it (a
// check whose units are held in flight: they come back when requests end,
// long before the wait a denial reports).
func (c *Cache[V]) Lookup(checks []store.Check, skip func(i int) bool, now time.Time) (t Ticket, denial V, at time.Time, found bool) {
	if !cacheable(checks, skip) {
		return Ticket{}, denial, at, false
	}
	t = Ticket{sent: now, changes: changes.Load(), OK: true}
	if c.live.Load() == 0 {
		return t, denial, at, false
	}
	t.id, t.hashed = c.stackOf(checks), true
	sh := c.shard(t.id)
	sh.mu.Lock()
	e, found := sh.entries[t.id]
	if found && (!t.sent.Before(e.until) || e.changes != changes.Load()) {
		sh.delete(t.id, &c.live)
		found = false
	}
	sh.mu.Unlock()
	return t, e.denial, e.at, found
}

// cacheable reports whether a stack's denial may be cached: no check
// costs 0 or is skipped.
func cacheable(checks []store.Check, skip func(i int) bool) bool {
	for j := range checks {
		if checks[j].Cost == 0 || skip(j) {
			return false
		}
	}
	return true
}

// stackOf identifies a stack by its keys, parameters and costs.
func (c *Cache[V]) stackOf(checks []store.Check) id {
	var stack id
	for i, seed := range c.seeds {
		var h maphash.Hash
		h.SetSeed(seed)
		for j := range checks {
			ch := &checks[j]
			k := &ch.Key // the bytes of its String, without building it
			for _, part := range [...]string{k.Prefix, ":{", k.Rule, ":", k.Identity, "}:", k.Suffix, "\x00", ch.Params} {
				h.WriteString(part)
			}
			var cost [9]byte
			for j := range 8 {
				cost[j] = byte(uint64(ch.Cost) >> (8 * j))
			}
			h.Write(cost[:]) // cost[8] = 0 ends the entry
		}
		stack[i] = h.Sum64()
	}
	return stack
}

func (c *Cache[V]) shard(stack id) *shard[V] {
	return &c.shards[stack[0]%uint64(len(c.shards))]
}

// Put remembers denial, the store's answer to t's stack (checks, as
// looked up), for wait (minus 1 ms: waits are rounded up) counted from
// when its request was sent, and at most the cache's maximum age. The
// cache keeps denial as given: the caller must not change it afterwards.
func (c *Cache[V]) Put(t Ticket, checks []store.Check, wait time.Duration, denial V) {
	if !t.OK || wait <= time.Millisecond {
		return
	}
	if !t.hashed {
		t.id = c.stackOf(checks)
	}
	sh := c.shard(t.id)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.entries == nil {
		sh.entries = make(map[id]entry[V])
	}
	_, again := sh.entries[t.id] // a stack cached again takes no room
	if !again && len(sh.entries) >= c.max {
		for k, v := range sh.entries {
			if !t.sent.Before(v.until) {
				sh.delete(k, &c.live)
			}
		}
		for k := range sh.entries { // map order is random: an arbitrary victim
			if len(sh.entries) < c.max {
				break
			}
			sh.delete(k, &c.live)
		}
	}
	if !again {
		c.live.Add(1)
	}
	sh.entries[t.id] = entry[V]{at: t.sent, until: t.sent.Add(min(wait-time.Millisecond, c.maxAge)), denial: denial, changes: t.changes}
}

// delete drops the entry of stack, which is there, counting it out of
// live. The shard is locked.
func (sh *shard[V]) delete(stack id, live *atomic.Int64) {
	delete(sh.entries, stack)
	live.Add(-1)
}
