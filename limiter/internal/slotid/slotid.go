// Package slotid numbers a Limiter's concurrency checks. Every such check
// is decided with an id of its own (store.Check.Slot), which names the
// slots it takes: its release (Settle) then removes exactly those slots,
// so that a release sent again after its reply was lost (see package
// release) changes nothing, even when other requests' slots were taken at
// the same instant (as a coalesced batch takes them, under one TIME).
//
// A bucket's, GCRA's or a queue's check carries one too: it names the
// epoch of a state the check writes empty, which a give-back must match,
// for as long as the state lasts.
//
// An id is a random base, drawn once per process, plus a counter: unique
// within the process, and two processes collide only if they draw ids
// that meet on one key in one microsecond (for a slot) or while one
// epoch lasts (for a state; with 2^52 ids, a chance of about n/2^52 for
// n ids another process draws meanwhile). Ids stay below 2^52, exact in
// a Lua number. (Known gap: during a rolling deploy, a decision of the
// code before ids, which numbers the slots of an instant by their count,
// can write over a slot without an id of the same key and microsecond.)
package slotid

import (
	"math/rand/v2"
	"sync/atomic"
)

// maxID bounds the ids: 1 to maxID.
const maxID = 1<<52 - 1

var (
	base = rand.Int64N(maxID)
	seq  atomic.Int64
)

// Next is a new slot id.
func Next() int64 {
	return (base+seq.Add(1))%maxID + 1
}
