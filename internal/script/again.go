package script

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"
)

// Pauses before a call refused for now is sent again: doubling from
// firstPause to maxPause, so that a call sends a few times within a
// store's timeout of 100 ms (at 0, 2, 6, 14, 30, 62 and 94 ms) and a server
// that takes long to recover is not flooded.
const (
	firstPause = 2 * time.Millisecond
	maxPause   = 32 * time.Millisecond
)

// refusedForNow reports a reply that says the server did not run the
// call and may take it soon: READONLY (a replica: a Sentinel failover
// under way, a master demoted that the client reached before it saw the
// new one; a replica writes nothing, whether it refused the call or the
// script's first write) or LOADING (a server loading its dataset, which
// refuses every call). go-redis sends such a call again only if it refuses
// no retries, which script calls do (see noRetry). After READONLY it
// closes the connection, so the call sent again dials a new one, and a
// failover client asks the Sentinel for the master.
func refusedForNow(err error) bool {
	return redis.HasErrorPrefix(err, "READONLY ") || redis.HasErrorPrefix(err, "LOADING ")
}

// wait waits pause and reports whether a call may be sent again: there is
// a deadline (deadline, the first send's, or ctx's if sooner), more than
// pause away, and ctx did not end meanwhile.
func wait(ctx context.Context, deadline time.Time, pause time.Duration) bool {
	if d, ok := ctx.Deadline(); ok && (deadline.IsZero() || d.Before(deadline)) {
		deadline = d
	}
	if deadline.IsZero() || time.Until(deadline) <= pause {
		return false
	}
	t := time.NewTimer(pause)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
