package limiter

import (
	"hash/maphash"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/store"
)

// denyCache remembers stacks that Redis denied, until the earliest time
// they could be admitted but for at most maxAge, so repeated requests of a
// denied client are denied without a round trip.
//
// While Redis keeps the client's state, it never turns an allow into a
// deny that Redis would not have made: the cached time is the denial's
// RetryAfter minus 1 ms (RetryAfter is rounded up), counted from before
// the request was sent, and other requests can only consume more in the
// meantime. (Two exceptions: on Redis Cluster a stack spanning slots may be
// denied while another request's consumption awaits its refund, and its
// cached wait then includes that consumption; and an admission under
// another plan of a bucket or GCRA with a faster rate makes its state
// drain at that rate, sooner than the cached wait counted on.) When Redis forgets the
// client sooner (an operator's reset, an eviction, a restart without
// persistence, a clock step), the cache goes on denying for at most
// maxAge. It never turns a deny into an allow: a miss asks Redis. Waits
// are counted on the local clock (or the WithClock one), which must advance
// with the Redis server's. A full shard replaces an arbitrary entry, so a
// crowd of denied clients cannot switch the cache off for newcomers.
type denyCache struct {
	seeds  [2]maphash.Seed
	shards [16]denyShard
	max    int // entries per shard
	maxAge time.Duration
}

type denyShard struct {
	mu      sync.Mutex
	entries map[stackID]denial
}

// stackID identifies a stack by two independent 64-bit hashes of its keys
// and costs: a collision between two live stacks (about 2^-128) is the
// only way one client could be denied by another's entry.
type stackID [2]uint64

type denial struct {
	at, until time.Time
	results   []RuleResult
	changes   uint64 // operatorChanges when its request was sent
}

// operatorChanges counts the Resets, Blocks and Unblocks made in this
// process, by any Limiter: a denial cached before the latest one is not
// trusted, so an operator's call takes effect at once on the instance
// that made it (and within the deny cache's maxAge on the others).
var operatorChanges atomic.Uint64

// operatorChanged counts an operator's call in operatorChanges.
func operatorChanged() { operatorChanges.Add(1) }

// ticket is what caching a stack's denial needs: the stack, when its
// request was sent, and operatorChanges then. ok is false for a stack
// that is not cached.
type ticket struct {
	id      stackID
	sent    time.Time
	changes uint64
	ok      bool
}

// lookup writes the cached denial of checks at now (the passed-in clock's
// time, or zero for the local clock) in d, Cached set, if there is one,
// and returns the ticket to cache the store's answer with.
func (c *denyCache) lookup(checks []store.Check, rules []checked, now time.Time, d *Decision) ticket {
	id, ok := c.stackOf(checks, rules)
	if !ok {
		return ticket{}
	}
	t := ticket{id: id, sent: now, changes: operatorChanges.Load(), ok: true}
	if t.sent.IsZero() {
		t.sent = time.Now()
	}
	if cached, ok := c.get(id, t.sent); ok {
		*d = cached
	}
	return t
}

func newDenyCache(size int, maxAge time.Duration) *denyCache {
	return &denyCache{seeds: [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}, max: max(1, size/16), maxAge: maxAge}
}

// stackOf identifies a stack by its keys, algorithms and costs. ok is false for
// stacks that are not cached: any cost of 0, or a rule whose units are held
// in flight (Facts.InFlight: a concurrency limit's slots come back when
// requests end, long before the wait it reports).
func (c *denyCache) stackOf(checks []store.Check, rules []checked) (stackID, bool) {
	var id stackID
	for i, seed := range c.seeds {
		var h maphash.Hash
		h.SetSeed(seed)
		for j := range checks {
			ch := &checks[j]
			if rules[j].algo.facts.InFlight || ch.Cost == 0 {
				return stackID{}, false
			}
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
		id[i] = h.Sum64()
	}
	return id, true
}

func (c *denyCache) shard(id stackID) *denyShard {
	return &c.shards[id[0]%uint64(len(c.shards))]
}

// get returns the cached denial of id at now, with its waits shortened by
// the time since; the rules that allowed it, and shadow rules, are
// Undecided.
func (c *denyCache) get(id stackID, now time.Time) (Decision, bool) {
	sh := c.shard(id)
	sh.mu.Lock()
	d, ok := sh.entries[id]
	if ok && (!now.Before(d.until) || d.changes != operatorChanges.Load()) {
		delete(sh.entries, id)
		ok = false
	}
	sh.mu.Unlock()
	if !ok {
		return Decision{}, false
	}
	elapsed := now.Sub(d.at)
	results := make([]RuleResult, len(d.results))
	for i, r := range d.results {
		if r.Shadow { // its would-be refusal is not this request's
			r.Allowed, r.RetryAfter = true, 0
		}
		r.Undecided = r.Allowed // asked nothing this time
		r.RetryAfter = shorten(r.RetryAfter, elapsed)
		r.ResetAfter = shorten(r.ResetAfter, elapsed)
		r.NextAfter = shorten(r.NextAfter, elapsed)
		results[i] = r
	}
	return Decision{At: now, Results: results, Cached: true}, true
}

// shorten subtracts elapsed from a wait, rounding up to the millisecond;
// algorithms.Never stays.
func shorten(wait, elapsed time.Duration) time.Duration {
	if wait <= 0 || wait == algorithms.Never {
		return wait
	}
	left := max(0, wait-elapsed)
	return (left + time.Millisecond - 1).Truncate(time.Millisecond)
}

// put remembers d, the store's denial of t's stack.
func (c *denyCache) put(t ticket, d Decision) {
	id, sent := t.id, t.sent
	wait := d.RetryAfter()
	if wait <= time.Millisecond || wait == algorithms.Never {
		return
	}
	sh := c.shard(id)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.entries == nil {
		sh.entries = make(map[stackID]denial)
	}
	if len(sh.entries) >= c.max {
		for k, v := range sh.entries {
			if !sent.Before(v.until) {
				delete(sh.entries, k)
			}
		}
		for k := range sh.entries { // map order is random: an arbitrary victim
			if len(sh.entries) < c.max {
				break
			}
			delete(sh.entries, k)
		}
	}
	// A copy: the caller owns d.Results and may change it.
	sh.entries[id] = denial{at: sent, until: sent.Add(min(wait-time.Millisecond, c.maxAge)), results: slices.Clone(d.Results),
		changes: t.changes}
}
