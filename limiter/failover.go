package limiter

import (
	"context"
	"sync/atomic"
	"time"
)

// failover decides with primary while it works and with fallback while it
// does not (see WithFallback).
type failover struct {
	primary, fallback Store
	retry             time.Duration
	downUntil         atomic.Int64 // Unix nanoseconds; 0 while primary is up
	probing           atomic.Bool  // one request at a time probes a down primary
}

// decide returns the primary's decision, or the fallback's with Fallback
// set and the primary's failure (nil when the primary was skipped as down).
func (f *failover) decide(ctx context.Context, now time.Time, checks []StoreCheck) (Decision, error) {
	if until := f.downUntil.Load(); until != 0 {
		if time.Now().UnixNano() < until || !f.probing.CompareAndSwap(false, true) {
			return f.fall(ctx, now, checks, nil)
		}
		defer f.probing.Store(false)
	}
	d, err := f.primary.Decide(ctx, now, checks)
	if err == nil {
		f.downUntil.Store(0)
		return d, nil
	}
	f.downUntil.Store(time.Now().Add(f.retry).UnixNano())
	return f.fall(ctx, now, checks, err)
}

// fall decides with the fallback. The primary may have used up the
// deadline; the fallback is local. A failing fallback is the failure.
func (f *failover) fall(ctx context.Context, now time.Time, checks []StoreCheck, cause error) (Decision, error) {
	d, err := f.fallback.Decide(context.WithoutCancel(ctx), now, checks)
	if err != nil {
		return Decision{}, err
	}
	d.Fallback = true
	return d, cause
}
