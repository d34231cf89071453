// Package memstore is an in-process limiter.Store: the same algorithms and
// the same results as the Redis scripts, computed by the algorithms' Go
// models, with state in sharded maps.
//
// Use it for a single-instance service, in tests of code that uses a
// limiter, or as the fallback of a Redis limiter (limiter.WithFallback). It
// is not shared between processes: N instances each admit the full limit.
//
// Memory is bounded. Every entry expires once its state can no longer
// matter (the same TTL the Redis keys get); each write examines a few
// random entries for expiry, and a shard that doubles is swept whole. Past MaxKeys live entries, arbitrary entries are
// dropped; a dropped entry is a fresh key again, which can only admit more,
// never deny wrongly.
package memstore

import (
	"context"
	"fmt"
	"hash/maphash"
	"slices"
	"sync"
	"time"

	"github.com/seed-bff0c9e1/ratelimit"
	"github.com/seed-bff0c9e1/ratelimit/internal/model"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
)

// Defaults, applied unless an Option says otherwise.
const (
	defaultMaxKeys = 1 << 20
	shardCount     = 64 // independently locked shards
)

// Option configures a Store.
type Option func(*Store) error

// WithMaxKeys bounds the live entries (default 1,048,576).
func WithMaxKeys(n int) Option {
	return func(s *Store) error {
		if n < 1 {
			return fmt.Errorf("%w: memstore max keys must be positive, got %d", ratelimit.ErrConfig, n)
		}
		s.maxKeys = n
		return nil
	}
}

// Store is an in-process limiter.Store. It is safe for concurrent use.
type Store struct {
	seed    maphash.Seed
	shards  [shardCount]shard
	maxKeys int
}

type shard struct {
	mu        sync.Mutex
	entries   map[string]entry
	nextSweep int
}

type entry struct {
	state   model.State
	expires int64 // µs since the Unix epoch, on the decisions' clock
}

// New returns an empty Store.
func New(opts ...Option) (*Store, error) {
	s := &Store{seed: maphash.MakeSeed(), maxKeys: defaultMaxKeys}
	for _, opt := range opts {
		if err := opt(s); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Must is New for package-level wiring: it panics on an invalid option.
func Must(opts ...Option) *Store {
	s, err := New(opts...)
	if err != nil {
		panic(err)
	}
	return s
}

// Len returns the number of entries held, expired ones not yet swept
// included.
func (s *Store) Len() int {
	n := 0
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		n += len(sh.entries)
		sh.mu.Unlock()
	}
	return n
}

// Decide implements limiter.Store. A zero now means time.Now().
func (s *Store) Decide(_ context.Context, now time.Time, checks []limiter.StoreCheck) (limiter.Decision, error) {
	if now.IsZero() {
		now = time.Now()
	}
	t := now.UnixMicro()
	var buf [4]int
	idx := buf[:0]
	for _, c := range checks {
		idx = append(idx, int(maphash.String(s.seed, c.Key)%uint64(len(s.shards))))
	}
	locked := idx
	if len(idx) > 1 {
		locked = slices.Compact(slices.Sorted(slices.Values(idx)))
	}
	for _, i := range locked { // in ascending order: no deadlock between stacks
		s.shards[i].mu.Lock()
	}
	defer func() {
		for _, i := range locked {
			s.shards[i].mu.Unlock()
		}
	}()

	var outBuf [4]model.Outcome
	outcomes := outBuf[:0]
	allowed := true
	for i, c := range checks {
		e, ok := s.shards[idx[i]].entries[c.Key]
		if ok && e.expires <= t {
			e = entry{}
		}
		o := model.Step(c.Algorithm, e.state, now, c.Cost)
		outcomes = append(outcomes, o)
		allowed = allowed && o.Status == model.Allowed
	}
	d := limiter.Decision{Allowed: allowed, At: now, Results: make([]limiter.RuleResult, len(checks))}
	for i, c := range checks {
		o := &outcomes[i]
		if !allowed {
			d.Results[i].Result = o.Held
			continue
		}
		d.Results[i].Result = o.Admitted
		if c.Cost > 0 {
			s.shards[idx[i]].put(c.Key, entry{state: o.Next, expires: t + o.TTL.Microseconds()}, t, s.maxPerShard())
		}
	}
	return d, nil
}

func (s *Store) maxPerShard() int { return max(1, s.maxKeys/len(s.shards)) }

// sampled is how many entries each put examines for expiry, like Redis's
// active expiry: a shard that stops growing still sheds its expired
// entries.
const sampled = 4

// put stores e. It checks a few entries at random for expiry; when the
// shard has doubled since its last sweep, it drops all expired entries, and
// past limit live entries it drops arbitrary ones down to 7/8 of limit, so
// the work stays amortized O(1) per put even under a flood of identities.
func (sh *shard) put(key string, e entry, now int64, limit int) {
	if sh.entries == nil {
		sh.entries = make(map[string]entry)
	}
	sh.entries[key] = e
	n := 0
	for k, v := range sh.entries { // map iteration starts at random
		if n++; n > sampled {
			break
		}
		if v.expires <= now {
			delete(sh.entries, k)
		}
	}
	if len(sh.entries) < sh.nextSweep {
		return
	}
	for k, v := range sh.entries {
		if v.expires <= now {
			delete(sh.entries, k)
		}
	}
	if len(sh.entries) > limit {
		target := limit - limit/8
		for k := range sh.entries {
			if len(sh.entries) <= target {
				break
			}
			if k != key {
				delete(sh.entries, k)
			}
		}
	}
	sh.nextSweep = min(limit+1, 2*len(sh.entries)+64)
}
