package store

import "time"

// Refund gives back part or all of an admitted check's cost.
type Refund struct {
	// Check is the check as decided; its Cost is what was consumed.
	Check Check
	// Back is how many units to give back, 1 to Check.Cost.
	Back int
	// Token is the Decide result's Token for the check.
	Token Token
	// Mark is the mark a Reset of the check's state leaves (see
	// Store.Reset), or the zero Mark for none to read: while the mark
	// lasts, a refund of a decision made at or before the Reset's instant
	// gives nothing.
	Mark Mark
	// Within bounds a refund of an unknown instant (see Store.Refund): its
	// decision ran no longer than this before now, so units older than
	// that are not looked at (a concurrency limit may hold many). Zero is
	// no bound.
	Within time.Duration
}

// Token is what a store needs to give a check's consumption back: the
// store writes it in Decide (Result.Token) and reads it in Refund. For
// the Lua scripts and the memstore, Stamp is the window start written
// (fixed and sliding windows), or the level or the TAT just after the
// decision (buckets, GCRA, queue), or the decision's Check.Slot (sliding
// log, concurrency; 0 for none), Refunded what had been given back on the
// key by then, and Epoch, for the buckets, GCRA and a queue, the epoch
// of the state the decision wrote: the Check.Slot of the decision that
// wrote it empty (0 for none; see Check.Slot). A refund gives nothing back
// into a state of another epoch, whatever the clock did since.
type Token struct {
	Stamp, Refunded, Epoch int64
}

// Mark is what a Reset leaves beside a state it forgets, so that refunds
// of decisions made before it give nothing: its key and how long it
// lasts. Its value is the Reset's instant plus TTL.
type Mark struct {
	Key Key
	TTL time.Duration
}
