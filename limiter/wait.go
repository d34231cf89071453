package limiter

import (
	"context"
	"errors"
	"time"
)

// delayOf is the longest Delay among d's results: how long an allowed
// request waits for its turn in a Queue rule before it is served (0 when
// no rule queues it). A shadow rule's turn delays nothing.
func delayOf(d Decision) time.Duration {
	var delay time.Duration
	for _, r := range d.Results {
		if !r.Shadow {
			delay = max(delay, r.Delay)
		}
	}
	return delay
}

// Wait decides like Decide and, when the checks are allowed with a delay
// (a Queue rule), waits for the request's turn before returning: for job
// workers, that take their turn and then run. A denied decision returns at
// once (its RetryAfter says when to come back). With a ctx already done,
// Wait takes no turn and returns ctx's error, like Decide. When ctx ends
// before the turn, Wait gives everything the decision consumed back (the
// turn goes to the next request to arrive; the decision is then settled)
// and returns the decision with ctx's error (not an ErrBackend, unless
// that settlement failed too): do not proceed.
func (l *Limiter) Wait(ctx context.Context, checks ...Check) (Decision, error) {
	d, err := l.Decide(ctx, checks...)
	if err != nil || !d.Allowed {
		return d, err
	}
	return d, l.Hold(ctx, d)
}

// Hold is Wait's second half, for a decision already made with Decide: it
// waits out an allowed decision's longest Delay (its turn in a Queue rule;
// it returns at once when no rule queues it), or gives the decision back
// and returns ctx's error when ctx ends first.
func (l *Limiter) Hold(ctx context.Context, d Decision) error {
	delay := delayOf(d)
	if !d.Allowed || delay <= 0 {
		return nil
	}
	t := time.NewTimer(delay)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		_, err := l.Settle(context.WithoutCancel(ctx), d, make([]int, len(d.Results))...)
		return errors.Join(ctx.Err(), err)
	}
}
