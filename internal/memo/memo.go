// Package memo keeps values computed from comparable keys, up to a bound,
// so that keys computed per request (a tenant's own plan, say) cannot
// grow a long-lived cache without limit.
package memo

import (
	"sync"
	"sync/atomic"
)

// Bounded keeps the values of the first Max keys it computes, and
// computes the others on each use. It is safe for concurrent use; the
// zero value keeps nothing until Max is set.
type Bounded[K comparable, V any] struct {
	Max      int64
	values   sync.Map     // K -> V
	computed atomic.Int64 // keys computed for lack of a value: at most Max are kept
}

// Get is the value kept for k, else f(k), kept when f succeeds and
// fewer than Max keys were computed before.
func (b *Bounded[K, V]) Get(k K, f func(K) (V, error)) (V, error) {
	if v, ok := b.values.Load(k); ok {
		return v.(V), nil
	}
	v, err := f(k)
	if err != nil || b.computed.Add(1) > b.Max {
		return v, err
	}
	kept, _ := b.values.LoadOrStore(k, v)
	return kept.(V), nil
}

// Kept is how many values b keeps.
func (b *Bounded[K, V]) Kept() (n int) {
	b.values.Range(func(any, any) bool { n++; return true })
	return n
}
