package memstore

import (
	"time"

	"github.com/seed-bff0c9e1/ratelimit/internal/model"
)

// Len is the number of entries held, expired ones not yet swept
// included, for the tests of package memstore_test.
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

// StateAt is the live state at key at now (a missing key's is the zero
// State), for the tests of package memstore_test.
func (s *Store) StateAt(key string, now time.Time) model.State {
	i := s.shardOf(key)
	defer s.unlock(s.lock([]int{i}))
	return s.state(i, key, now.UnixMicro())
}
