// Package model holds the executable specification of the eight algorithms:
// pure Go functions that decide a request against a key's state at a given
// instant, computing exactly what the Lua scripts compute. The in-process
// store runs them, and the differential tests hold the scripts to them.
package model

import (
	"strconv"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/internal/exact"
)

// State is one key's stored state. The zero value is a key that does not
// exist. Each algorithm uses its own fields.
type State struct {
	// Exists is false for a missing (fresh) key.
	Exists bool
	// Start, Count and Prev are the windowed algorithms' window start (µs),
	// current count and, for SlidingWindow, the previous window's count.
	Start, Count, Prev int64
	// Level and Updated are the buckets' stored level (in units scaled by
	// the period in µs; a token bucket's missing tokens) and last update
	// (µs).
	Level, Updated int64
	// Plan is the parameters a bucket's or GCRA's state was written under.
	Plan Plan
	// TAT is GCRA's theoretical arrival time (µs), or a queue's tail.
	TAT int64
	// Log is SlidingLog's (and Concurrency's) admitted units, sorted as
	// sliding_log.lua's members (see Unit.Before).
	Log []Unit
	// Ledger is the draining rules' account of give-backs.
	Ledger
	// Epoch is a bucket's, GCRA's or a queue's epoch: the slot id
	// (store.Check.Slot) of the decision that wrote it empty (missing, a
	// level drained to 0, a TAT not ahead of now), kept by every later
	// write while it holds units; 0 when that decision had none. A
	// give-back goes only into the epoch its token names (see Refund): a
	// state emptied and written afresh holds none of an earlier
	// decision's units, whatever the clock did since.
	Epoch int64
	// Seen is the latest instant (µs) GCRA's or a queue's state was
	// decided at in its epoch (a bucket's is Updated): what its TAT has
	// drained to, which a give-back counts from (see Ledger.refund) when
	// the clock has stepped back since.
	Seen int64
}

// Status is a rule's verdict on a request.
type Status int8

const (
	// Denied: the cost does not fit now, but will later.
	Denied Status = iota
	// Allowed: the cost fits.
	Allowed
	// Impossible: the cost exceeds what the rule can ever admit.
	Impossible
)

// Outcome is one request against one state.
type Outcome struct {
	// Status is the rule's verdict on its own.
	Status Status
	// Held is the result if nothing is written: the request is denied, or
	// another rule of its stack denied it.
	Held algorithms.Result
	// Admitted is the result once Next is stored (valid when Allowed).
	Admitted algorithms.Result
	// Next is the state to store when the request is admitted with a
	// positive cost.
	Next State
	// TTL is how long Next matters; past it, Next behaves as a missing key.
	TTL time.Duration
}

// Unit is one unit of a sliding log or one slot of a concurrency limit,
// as sliding_log.lua names its member: "<At>:#<Slot>:<I>" for a decision
// with a slot id (I counting its units 1..cost), else "<At>:<I>" (I, six
// digits, counting the id-less units of the instant).
type Unit struct {
	// At is the unit's time, µs.
	At int64
	// Slot is its decision's id (store.Check.Slot), 0 for none.
	Slot int64
	// I numbers it: within its decision, or among the id-less units of At.
	I int64
}

// Before reports whether u's member sorts before v's in the sorted set: by
// time, then by name, where the id-less units of one time come last ('#'
// sorts before the digits) and the others sort as their names' text.
func (u Unit) Before(v Unit) bool {
	switch {
	case u.At != v.At:
		return u.At < v.At
	case (u.Slot == 0) != (v.Slot == 0):
		return u.Slot != 0
	case u.Slot == 0:
		return u.I < v.I // six digits, zero-padded: as the text
	}
	return u.suffix() < v.suffix()
}

// suffix is a slot's unit's name after "<At>:#".
func (u Unit) suffix() string {
	return strconv.FormatInt(u.Slot, 10) + ":" + strconv.FormatInt(u.I, 10)
}

// Step decides a request of cost at now (microsecond precision) against s
// without changing s.
func Step(alg algorithms.Algorithm, s State, now time.Time, cost int) Outcome {
	return StepSlot(alg, s, now, cost, 0)
}

// StepSlot is Step for a decision whose slot id (store.Check.Slot) is
// slot, which names the units a sliding log or a concurrency limit
// writes, and the epoch of the state a bucket, GCRA or a queue
// writes empty (0: none; see State.Epoch).
func StepSlot(alg algorithms.Algorithm, s State, now time.Time, cost int, slot int64) Outcome {
	o := step(alg, s, now, cost, slot)
	if !o.Next.Exists {
		return o
	}
	t := now.UnixMicro()
	switch alg.(type) {
	case algorithms.TokenBucket, algorithms.LeakyBucket:
		o.Next.Epoch = epoch(s, s.Exists && drain(min(s.Plan.Size*s.Plan.Period, s.Level), t-s.Updated, s.Plan.Rate) > 0, slot)
	case algorithms.GCRA, algorithms.Queue:
		holds := s.Exists && s.TAT > t
		o.Next.Epoch, o.Next.Seen = epoch(s, holds, slot), t
		if holds {
			o.Next.Seen = max(s.Seen, t)
		}
	}
	return o
}

// epoch is the epoch of the state a decision with slot id slot
// writes over s: s's while s holds units, else slot's.
func epoch(s State, holds bool, slot int64) int64 {
	if holds {
		return s.Epoch
	}
	return slot
}

// step is StepSlot without the epoch.
func step(alg algorithms.Algorithm, s State, now time.Time, cost int, slot int64) Outcome {
	switch a := alg.(type) {
	case algorithms.FixedWindow:
		return fixedWindow(a, s, now, cost)
	case algorithms.SlidingLog:
		return slidingLog(a, s, now, cost, slot)
	case algorithms.SlidingWindow:
		return slidingWindow(a, s, now, cost)
	case algorithms.TokenBucket:
		return meter(s, now, cost, bucketPlan(a.Capacity, a.Rate, a.Period))
	case algorithms.LeakyBucket:
		return meter(s, now, cost, bucketPlan(a.Capacity, a.Rate, a.Period))
	case algorithms.GCRA:
		return gcra(a, s, now, cost)
	case algorithms.Queue:
		return queue(a, s, now, cost)
	case algorithms.Concurrency:
		// A slot is a sliding log's entry whose window is the TTL.
		return slidingLog(algorithms.SlidingLog{Limit: a.Limit, Window: a.TTL}, s, now, cost, slot)
	}
	panic("model: unknown algorithm " + alg.String()) // the set is sealed
}

// verdict is the status and wait of a cost against a quantity: Impossible
// when cost exceeds size, Denied with the wait when it does not fit now.
func verdict(cost, size int64, fits bool, wait func() int64) (Status, int64) {
	switch {
	case cost > size:
		return Impossible, 0
	case !fits:
		return Denied, wait()
	}
	return Allowed, 0
}

// quantities are the integers every algorithm computes, as stack.lua
// reports them; all but remaining are µs.
type quantities struct {
	// remaining, retry, reset and next describe the state before the
	// request (next: until one more unit is available).
	remaining, retry, reset, next int64
	// after and nextAfter are reset and next once the request is admitted.
	after, nextAfter int64
	// delay is how long an allowed request waits for its turn (a queue).
	delay int64
}

// outcome builds an Outcome from an algorithm's quantities and the state
// to store when the request is admitted.
func outcome(status Status, q quantities, next State, cost int) Outcome {
	held := algorithms.Result{Allowed: status == Allowed, Remaining: int(max(0, q.remaining)),
		ResetAfter: exact.CeilMillis(q.reset), NextAfter: exact.CeilMillis(q.next)}
	switch {
	case status == Impossible:
		held.RetryAfter = algorithms.Never
	case q.retry > 0:
		held.RetryAfter = exact.CeilMillis(q.retry)
	}
	if status == Allowed {
		held.Delay = exact.CeilMillis(q.delay)
	}
	o := Outcome{Status: status, Held: held}
	if status == Allowed {
		o.Admitted = held
		if cost > 0 {
			o.Admitted.Remaining -= cost
			o.Admitted.ResetAfter = exact.CeilMillis(q.after)
			o.Admitted.NextAfter = exact.CeilMillis(q.nextAfter)
			o.Next = next
			o.Next.Exists = true
			o.TTL = max(time.Millisecond, exact.CeilMillis(q.after))
		}
	}
	return o
}
