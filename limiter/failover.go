package limiter

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
)

// failover decides with primary while it works and with fallback while it
// does not (see WithFallback).
type failover struct {
	primary, fallback Store
	retry             time.Duration
	downUntil         atomic.Int64 // Unix nanoseconds; 0 while primary is up
	probing           atomic.Bool  // one request at a time probes a down primary
}

func (f *failover) decide(ctx context.Context, now time.Time, checks []StoreCheck, results []algorithms.Result) (Decision, error) {
	if until := f.downUntil.Load(); until != 0 {
		if time.Now().UnixNano() < until || !f.probing.CompareAndSwap(false, true) {
			allowed, err := f.fallback.Decide(ctx, now, checks, results)
			return Decision{Allowed: allowed, Fallback: true}, err
		}
		defer f.probing.Store(false)
	}
	allowed, err := f.primary.Decide(ctx, now, checks, results)
	if err == nil {
		f.downUntil.Store(0)
		return Decision{Allowed: allowed}, nil
	}
	f.downUntil.Store(time.Now().Add(f.retry).UnixNano())
	// The primary may have used up the deadline; the fallback is local.
	allowed, ferr := f.fallback.Decide(context.WithoutCancel(ctx), now, checks, results)
	return Decision{Allowed: allowed, Fallback: true, Err: backendError(err)}, ferr
}
