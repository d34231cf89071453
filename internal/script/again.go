package script

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"
)

// Pauses before a call refused for now is sent again: doubling from
// firstPause to maxPause, so that a call sends a few times within a
// store's timeout of 100 ms (at 0, 2, 6, 14, 30 and 62 ms) and a server
// that takes long to recover is not flooded.
const (
	firstPause = 2 * time.Millisecond
	maxPause   = 32 * time.Millisecond
)

// refusedForNow reports a reply that says the server did not run the
// call and may take it soon, each refused before the call runs (or, for a
// script without flags, at its first write, when it has written nothing):
//   - READONLY: a replica (a Sentinel failover under way, a master
//     demoted that the client reached before it saw the new one; a
//     replica writes nothing, whether it refused the call or the
//     script's first write);
//   - MASTERDOWN: a replica whose master is away, set not to serve stale
//     data (replica-serve-stale-data no): a failover's demoted master
//     while it syncs with the new one;
//   - LOADING: a server loading its dataset, which refuses every call;
//   - CLUSTERDOWN: a Cluster that does not serve the slot for now (a
//     master failed and no replica has taken its place yet);
//   - TRYAGAIN: a Cluster slot being moved, part of its keys here;
//   - NOREPLICAS: a master with fewer replicas in sync than its
//     min-replicas-to-write, which refuses writes.
//
// go-redis sends such a call again only if it refuses no retries, which
// script calls do (see noRetry). After READONLY it closes the connection,
// so the call sent again dials a new one, and a failover client asks the
// Sentinel for the master.
func refusedForNow(err error) bool {
	if err == nil { // the common case, without a type search per prefix
		return false
	}
	for _, prefix := range refusals {
		if redis.HasErrorPrefix(err, prefix) {
			return true
		}
	}
	return false
}

// refusals are the replies' prefixes refusedForNow takes.
var refusals = [...]string{"READONLY ", "MASTERDOWN ", "LOADING ", "CLUSTERDOWN ", "TRYAGAIN ", "NOREPLICAS "}

// wait waits pause and reports whether a call may be sent again: there is
// a deadline (deadline, the first send's, or ctx's if sooner), and after
// the pause at least as long again is left before it for the send (which
// dials a connection after READONLY): a send cut short by the deadline
// would leave the call's outcome unknown, where the refusal proves that
// it did not run. ctx must not end meanwhile.
func wait(ctx context.Context, deadline time.Time, pause time.Duration) bool {
	if d, ok := ctx.Deadline(); ok && (deadline.IsZero() || d.Before(deadline)) {
		deadline = d
	}
	if deadline.IsZero() || time.Until(deadline) < 2*pause {
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
