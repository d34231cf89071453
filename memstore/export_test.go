package memstore

import (
	"time"

	"github.com/seed-bff0c9e1/ratelimit/internal/model"
)

// Len is size, for the tests of package memstore_test.
func (s *Store) Len() int { return s.size() }

// StateAt is the live state at key at now (a missing key's is the zero
// State), for the tests of package memstore_test.
func (s *Store) StateAt(key string, now time.Time) model.State {
	i := s.shardOf(key)
	defer s.unlock(s.lock([]int{i}))
	return s.state(i, key, now.UnixMicro())
}
