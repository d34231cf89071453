// Package memstore is an in-process store.Store: the same algorithms and
// the same results as the Redis scripts, computed by the algorithms' Go
// models, with state in sharded maps.
//
// Use it for a single-instance service, in tests of code that uses a
// limiter, or as the fallback of a Redis limiter (limiter.WithFallback). It
// is not shared between processes: N instances each admit the full limit.
//
// Memory is bounded. Every entry expires once its state can no longer
// matter (the same TTL the Redis keys get) and is dropped a second after
// that (at once when its shard is at its cap), so that a client that comes
// back sooner reuses its entry: each write examines a few random entries,
// and a shard that doubles is swept whole.
// Past MaxKeys live entries, arbitrary entries are dropped; a dropped
// entry is a fresh key again, which can only admit more, never deny
// wrongly. The cap is kept per shard (MaxKeys over the shards), so a
// store of fewer than 65,536 keys has fewer shards, each of 1,024 entries
// at least: one entry over a shard's share drops another, and shards of a
// handful of entries would drop live ones long before MaxKeys. An entry
// is found by its store.Key as the limiter built it, and keeps the
// strings it holds: the limiter bounds an identity to 64
// bytes (longer ones are hashed), but one cut from a larger string keeps
// that string's memory alive while the entry lives.
package memstore

import (
	"context"
	"fmt"
	"hash/maphash"
	"slices"
	"sync"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/exact"
	"github.com/seed-bff0c9e1/ratelimit/internal/model"
	"github.com/seed-bff0c9e1/ratelimit/internal/options"
	"github.com/seed-bff0c9e1/ratelimit/store"
)

// Defaults, applied unless an Option says otherwise.
const (
	defaultMaxKeys = 1 << 20
	shardCount     = 64 // independently locked shards, at most
	minShardKeys   = 1024
)

// Option configures the store New returns.
type Option func(*memStore) error

// WithMaxKeys bounds the live entries (default 1,048,576).
func WithMaxKeys(n int) Option {
	return func(s *memStore) error {
		if n < 1 {
			return fmt.Errorf("WithMaxKeys: max keys must be positive, got %d", n)
		}
		s.maxKeys = n
		return nil
	}
}

// memStore is the in-process store.Store. It is safe for concurrent use.
type memStore struct {
	seed    maphash.Seed
	shards  [shardCount]shard
	used    int // the shards in use: shardCount, fewer for a small MaxKeys
	maxKeys int
}

type shard struct {
	mu sync.Mutex
	// entries are held by pointer and written in place: a state (with its
	// give-back ledger and a bucket's or GCRA's plan) is larger than a map
	// keeps inline. spare holds entries dropped since, for reuse, so that
	// keys that expire and come back allocate nothing.
	entries   map[store.Key]*entry
	spare     []*entry
	nextSweep int
	puts      uint32 // puts since the shard was made, for sampleEvery
}

var _ store.Store = (*memStore)(nil)

type entry struct {
	state   model.State
	expires int64 // µs since the Unix epoch, on the decisions' clock
}

// New returns an empty in-process store.Store, safe for concurrent use.
func New(opts ...Option) (store.Store, error) {
	s := &memStore{seed: maphash.MakeSeed(), maxKeys: defaultMaxKeys}
	if err := options.Apply(s, opts); err != nil {
		return nil, err
	}
	s.used = min(shardCount, max(1, s.maxKeys/minShardKeys))
	return s, nil
}

// Must is New for package-level wiring: it panics on an invalid option.
func Must(opts ...Option) store.Store {
	s, err := New(opts...)
	if err != nil {
		panic(err)
	}
	return s
}

// Decide implements store.Store. A zero now means time.Now().
func (s *memStore) Decide(_ context.Context, now time.Time, checks []store.Check, results []store.Result) (store.Verdict, error) {
	if now.IsZero() {
		now = time.Now()
	}
	t := now.UnixMicro()
	var buf, bbuf [4]int
	var lockBuf [8]int
	idx, bidx, locked := buf[:0], bbuf[:0], lockBuf[:0]
	for _, c := range checks {
		idx = append(idx, s.shardOf(c.Key))
		bidx = append(bidx, -1)
		locked = append(locked, idx[len(idx)-1])
		if c.Blocks != (store.Key{}) {
			bidx[len(bidx)-1] = s.shardOf(c.Blocks)
			locked = append(locked, bidx[len(bidx)-1])
		}
	}
	defer s.unlock(s.lock(locked))

	var outBuf [4]model.Outcome
	outcomes := outBuf[:0]
	var blockedBuf, penalizedBuf [4]bool
	blocked, penalized := blockedBuf[:0], penalizedBuf[:0] // penalized: a block written
	var leaseBuf [4]int
	leases := leaseBuf[:0]
	// Each check's entry is looked up once and written in place: nothing
	// drops an entry until every check is written (see maintain).
	var entryBuf [4]*entry
	entries := entryBuf[:0]
	allowed := true
	for i, c := range checks {
		e := s.shards[idx[i]].entries[c.Key]
		var st model.State
		if e != nil && e.expires > t {
			st = e.state
		}
		lease := c.LeaseUnits
		if c.Shadow { // a shadow check takes no lease
			lease = 0
		}
		o, lease := model.Take(c.Algorithm, st, now, c.Cost, lease, c.Slot)
		leases, entries = append(leases, lease), append(entries, e)
		isBlocked, isPenalized := false, false
		if left := s.blockLeft(bidx[i], c.Blocks, t); left > 0 {
			// Admitted once both the block and the rule allow.
			wait, h := exact.CeilMillis(left), o.Held
			o, isBlocked = model.Outcome{Held: algorithms.Result{RetryAfter: max(h.RetryAfter, wait), ResetAfter: max(h.ResetAfter, wait), NextAfter: max(h.NextAfter, wait)}}, true
		} else {
			if o.Status == model.Denied && c.Blocks != (store.Key{}) && c.Penalty > 0 && c.Cost > 0 && !c.Shadow { // a peek writes nothing
				until := t + c.Penalty.Microseconds()
				s.shards[bidx[i]].set(c.Blocks, entry{state: model.State{Exists: true, TAT: until}, expires: until})
				wait := exact.CeilMillis(c.Penalty.Microseconds())
				o.Held.RetryAfter, o.Held.ResetAfter, o.Held.NextAfter = max(o.Held.RetryAfter, wait), max(o.Held.ResetAfter, wait), max(o.Held.NextAfter, wait)
				isBlocked, isPenalized = true, true
			}
		}
		outcomes = append(outcomes, o)
		blocked, penalized = append(blocked, isBlocked), append(penalized, isPenalized)
		allowed = allowed && (c.Shadow || !isBlocked && o.Status == model.Allowed)
	}
	// commits reports whether check i consumes: its stack is allowed and
	// it allows (only a shadow check denies in an allowed stack).
	commits := func(i int) bool { return allowed && !blocked[i] && outcomes[i].Status == model.Allowed }
	for i, c := range checks {
		o := &outcomes[i]
		results[i] = store.Result{Result: o.Held, Blocked: blocked[i]}
		if !commits(i) {
			continue
		}
		results[i].Result, results[i].Leased = o.Admitted, leases[i]
		if c.Cost > 0 {
			results[i].Token = model.TokenOf(c.Algorithm, o.Next, c.Slot)
			written := entry{state: o.Next, expires: t + o.TTL.Microseconds()}
			if e := entries[i]; e != nil {
				*e = written
			} else {
				s.shards[idx[i]].set(c.Key, written)
			}
		}
	}
	for i, c := range checks {
		if commits(i) && c.Cost > 0 { // written
			s.shards[idx[i]].maintain(c.Key, t, s.maxPerShard())
		}
		if penalized[i] {
			s.shards[bidx[i]].maintain(c.Blocks, t, s.maxPerShard())
		}
	}
	return store.Verdict{Allowed: allowed, At: now}, nil
}

// Refund implements store.Store. A zero now means time.Now().
func (s *memStore) Refund(_ context.Context, now, at time.Time, refunds []store.Refund) error {
	if now.IsZero() {
		now = time.Now()
	}
	t := now.UnixMicro()
	for _, r := range refunds {
		var buf [2]int
		i, j := s.shardOf(r.Check.Key), -1 // j: the Reset mark's shard, if any
		held := append(buf[:0], i)
		if r.Mark.Key != (store.Key{}) {
			j = s.shardOf(r.Mark.Key)
			held = append(held, j)
		}
		locked := s.lock(held)
		// A mark is kept as a block ending its TTL after the Reset's instant.
		// A decision of an unknown instant gives back its slot id's units
		// alone, which are still there only if it came after the Reset.
		if left := s.blockLeft(j, r.Mark.Key, t); left > 0 && !at.IsZero() && at.UnixMicro() <= t+left-r.Mark.TTL.Microseconds() {
			s.unlock(locked) // a Reset forgot the state since the decision
			continue
		}
		sh := &s.shards[i]
		next, ttl := model.Refund(r.Check.Algorithm, s.state(i, r.Check.Key, t), now, at, r.Within, r.Check.Cost, r.Back, r.Token)
		switch e := sh.entries[r.Check.Key]; {
		case !next.Exists:
			sh.drop(r.Check.Key)
		case ttl > 0:
			sh.set(r.Check.Key, entry{state: next, expires: t + ttl.Microseconds()})
		case e != nil:
			e.state = next
		}
		s.unlock(locked)
	}
	return nil
}

// Block implements store.Store. A zero now means time.Now().
func (s *memStore) Block(_ context.Context, now time.Time, key store.Key, d time.Duration) error {
	if now.IsZero() {
		now = time.Now()
	}
	i := s.shardOf(key)
	defer s.unlock(s.lock([]int{i}))
	s.extend(i, key, now.UnixMicro(), d)
	return nil
}

// extend makes the block at key, in shard i, last until d after t (µs),
// unless it lasts longer already. Shard i is locked.
func (s *memStore) extend(i int, key store.Key, t int64, d time.Duration) {
	until := t + d.Microseconds()
	if left := s.blockLeft(i, key, t); t+left < until {
		s.putBlock(i, key, t, until)
	}
}

// Reset implements store.Store: it counts the live entries it found,
// as Redis would (it drops expired ones too). A zero now means
// time.Now().
func (s *memStore) Reset(_ context.Context, now time.Time, keys []store.Key, marks []store.Mark) (int, error) {
	if now.IsZero() {
		now = time.Now()
	}
	t := now.UnixMicro()
	shards := make([]int, len(keys)+len(marks))
	for j, k := range keys {
		shards[j] = s.shardOf(k)
	}
	for j, m := range marks {
		shards[len(keys)+j] = s.shardOf(m.Key)
	}
	defer s.unlock(s.lock(slices.Clone(shards)))
	n := 0
	for j, k := range keys {
		sh := &s.shards[shards[j]]
		if e := sh.entries[k]; e != nil {
			if e.expires > t {
				n++
			}
			sh.drop(k)
		}
	}
	if n > 0 {
		for i, m := range marks {
			s.extend(shards[len(keys)+i], m.Key, t, m.TTL)
		}
	}
	return n, nil
}

// shardOf is the shard of key: of its identity, so that the rules of one
// client share a lock.
func (s *memStore) shardOf(key store.Key) int {
	return int(maphash.String(s.seed, key.Identity) % uint64(s.used))
}

// lock locks shards, sorted and without repeats in place, in ascending
// order (no deadlock between stacks), and returns them for unlock.
func (s *memStore) lock(locked []int) []int {
	if len(locked) > 1 {
		slices.Sort(locked)
		locked = slices.Compact(locked)
	}
	for _, i := range locked {
		s.shards[i].mu.Lock()
	}
	return locked
}

func (s *memStore) unlock(locked []int) {
	for _, i := range locked {
		s.shards[i].mu.Unlock()
	}
}

// state is the live state at key in shard i at t (µs); its shard is locked.
func (s *memStore) state(i int, key store.Key, t int64) model.State {
	e := s.shards[i].entries[key]
	if e == nil || e.expires <= t {
		return model.State{}
	}
	return e.state
}

// blockLeft is the time left (µs) of the block at key in shard i at t, 0
// when none; i < 0 means no block key. A block's end is kept in TAT.
func (s *memStore) blockLeft(i int, key store.Key, t int64) int64 {
	if i < 0 {
		return 0
	}
	if st := s.state(i, key, t); st.Exists && st.TAT > t {
		return st.TAT - t
	}
	return 0
}

// putBlock writes a block until the instant until (µs) at key in shard i.
func (s *memStore) putBlock(i int, key store.Key, t, until int64) {
	s.shards[i].put(key, entry{state: model.State{Exists: true, TAT: until}, expires: until}, t, s.maxPerShard())
}

func (s *memStore) maxPerShard() int { return max(1, s.maxKeys/s.used) }

// Every sampleEvery-th put of a shard examines sampled entries for expiry,
// like Redis's active expiry: a shard that stops growing still sheds its
// expired entries (2 entries examined per put on average), and the other
// puts pay nothing for it (starting a map iteration at random costs about
// as much as the rest of the put).
// Sampling and sweeps drop the entries expired for sampleGrace (µs) at
// least: a client that comes back within it finds its entry and writes it
// in place, instead of the map deleting and inserting it again (which
// costs more than the rest of a decision).
const (
	sampleEvery = 4
	sampled     = 8
	sampleGrace = int64(time.Second / time.Microsecond)
)

// spareEntries is how many dropped entries a shard keeps for reuse.
const spareEntries = 64

// set stores e at key, in place of the entry there, or in a spare one.
func (sh *shard) set(key store.Key, e entry) {
	if p := sh.entries[key]; p != nil {
		*p = e
		return
	}
	if sh.entries == nil {
		sh.entries = make(map[store.Key]*entry)
	}
	var p *entry
	if n := len(sh.spare); n > 0 {
		p, sh.spare = sh.spare[n-1], sh.spare[:n-1]
	} else {
		p = new(entry)
	}
	*p = e
	sh.entries[key] = p
}

// drop deletes the entry at key and keeps it, cleared, for reuse.
func (sh *shard) drop(key store.Key) {
	p := sh.entries[key]
	if p == nil {
		return
	}
	delete(sh.entries, key)
	if len(sh.spare) < spareEntries {
		*p = entry{}
		sh.spare = append(sh.spare, p)
	}
}

// dropExpired drops the entries expired at t (µs).
func (sh *shard) dropExpired(t int64) {
	for k, v := range sh.entries {
		if v.expires <= t {
			sh.drop(k)
		}
	}
}

// put stores e and maintains the shard.
func (sh *shard) put(key store.Key, e entry, now int64, limit int) {
	sh.set(key, e)
	sh.maintain(key, now, limit)
}

// maintain follows a write at key. It checks a few entries at random for
// expiry; when the shard has doubled since its last sweep, it drops the
// entries expired for sampleGrace; past limit entries, every expired one
// (never a live one while an expired one is left), then arbitrary ones
// (key aside) down to 7/8 of limit, so the work stays amortized O(1) per
// write even under a flood of identities.
func (sh *shard) maintain(key store.Key, now int64, limit int) {
	if sh.puts++; sh.puts%sampleEvery == 0 {
		n := 0
		for k, v := range sh.entries { // map iteration starts at random
			if n++; n > sampled {
				break
			}
			if v.expires <= now-sampleGrace {
				sh.drop(k)
			}
		}
	}
	if len(sh.entries) < sh.nextSweep {
		return
	}
	sh.dropExpired(now - sampleGrace)
	if len(sh.entries) > limit {
		sh.dropExpired(now)
	}
	if len(sh.entries) > limit {
		target := limit - limit/8
		for k := range sh.entries {
			if len(sh.entries) <= target {
				break
			}
			if k != key {
				sh.drop(k)
			}
		}
	}
	sh.nextSweep = min(limit+1, 2*len(sh.entries)+64)
}
