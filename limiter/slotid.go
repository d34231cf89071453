package limiter

import (
	"math/rand/v2"
	"sync/atomic"

	"github.com/seed-bff0c9e1/ratelimit/store"
)

// Every concurrency check is decided with an id of its own
// (store.Check.Slot), which names the slots it takes: its release
// (Settle) then removes exactly those slots, so that a release sent again
// after its reply was lost (see releases) changes nothing, even when
// other requests' slots were taken at the same instant (as a coalesced
// batch takes them, under one TIME).
//
// An id is a random base, drawn once per process, plus a counter: unique
// within the process, and two processes collide only if they draw ids
// that meet on one key in one microsecond. Ids stay below 2^52, exact in
// a Lua number. (Known gap: during a rolling deploy, a decision of the
// code before ids, which numbers the slots of an instant by their count,
// can write over a slot without an id of the same key and microsecond.)

// maxSlotID bounds the ids: 1 to maxSlotID.
const maxSlotID = 1<<52 - 1

var (
	slotBase = rand.Int64N(maxSlotID)
	slotSeq  atomic.Int64
)

// nextSlot is a new slot id.
func nextSlot() int64 {
	return (slotBase+slotSeq.Add(1))%maxSlotID + 1
}

// nameSlots gives each check of sc that takes slots (its algorithm,
// rules[i]'s, holds units in flight) an id.
func nameSlots(sc []store.Check, rules []checked) {
	for i := range sc {
		if rules[i].algo.facts.InFlight && sc[i].Cost > 0 {
			sc[i].Slot = nextSlot()
		}
	}
}
