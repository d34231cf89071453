package rls

import (
	"maps"
	"sync"
	"sync/atomic"
)

// series are one vector's series by label value, as its WithLabelValues
// gives them, found without a lock: a decision counts in several series
// (per rule of its checks, and its outcome), and the vector finds each by
// validating and hashing the label under a read lock that every request
// shares. The label values are few (the configuration's rules, the
// outcomes): a new one copies the map.
type series[T any] struct {
	with func(...string) T // the vector's WithLabelValues
	mu   sync.Mutex        // serialises additions
	m    atomic.Pointer[map[string]T]
}

// newSeries is the series of the vector whose WithLabelValues is with,
// none found yet.
func newSeries[T any](with func(...string) T) *series[T] {
	s := &series[T]{with: with}
	s.m.Store(&map[string]T{})
	return s
}

// of is the series of label value v, made on first use as the vector
// makes it.
func (s *series[T]) of(v string) T {
	if t, ok := (*s.m.Load())[v]; ok {
		return t
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	old := *s.m.Load()
	if t, ok := old[v]; ok {
		return t
	}
	t := s.with(v)
	m := make(map[string]T, len(old)+1)
	maps.Copy(m, old)
	m[v] = t
	s.m.Store(&m)
	return t
}
