package main

import (
	"context"
	"time"
)

// outageSettings are the outage's parameters.
type outageSettings struct {
	callers  int           // callers running throughout
	pace     time.Duration // each caller calls at most once per pace
	deadline time.Duration // each call's deadline: Envoy's 20 ms
	before   time.Duration // load before Redis is killed
	down     time.Duration // how long Redis stays down
	after    time.Duration // load after Redis is back, until the last snapshot
	termWait time.Duration // how long a SIGTERM is waited for before a SIGKILL
}

// snapshot is a server's goroutines and RSS at one moment.
type snapshot struct {
	goroutines int   // -1: not known
	rss        int64 // bytes, -1: not known
}

// outage is the outage's outcome on one server.
type outage struct {
	calls, answered         int64         // every call, and those answered within the deadline
	downCalls, downAnswered int64         // the calls made while Redis was down
	before, during, after   snapshot      // at the kill, before the restart, after the restart
	recovery                time.Duration // from Redis answering again to the first OK decision; -1: none
	exit                    time.Duration // from SIGTERM to the process's exit
	exited                  bool          // within termWait; else it was killed
}

// runOutage runs callers with a deadline each call; kills Redis after
// before, starts it again on its port after down, keeps the callers on
// for after, then stops them and the server (SIGTERM).
func runOutage(ctx context.Context, o outageSettings, s *server, r *redisServer, c *client, tr *traffic, seed uint64) (outage, error) {
	stopCallers := startOutageCallers(ctx, o, c, tr, seed)
	snap := func() snapshot { return snapshot{goroutines: goroutines(s.debugAddr), rss: rss(s.cmd.Process.Pid)} }
	var out outage
	var killed, back time.Time
	err := func() error {
		if err := sleep(ctx, o.before); err != nil {
			return err
		}
		out.before = snap()
		killed = time.Now()
		r.kill()
		if err := sleep(ctx, o.down); err != nil {
			return err
		}
		out.during = snap()
		if err := r.restart(); err != nil {
			return err
		}
		back = time.Now()
		if err := sleep(ctx, o.after); err != nil {
			return err
		}
		out.after = snap()
		return nil
	}()
	calls := stopCallers()
	if err != nil {
		return out, err
	}
	out.count(calls, killed, back)
	out.exit, out.exited, err = s.terminate(o.termWait)
	return out, err
}

// count sets the calls' figures: Redis was killed at killed and
// answered again at back.
func (out *outage) count(calls []outcall, killed, back time.Time) {
	out.recovery = -1
	for _, c := range calls {
		out.calls++
		if c.answered {
			out.answered++
		}
		if !c.start.Before(killed) && c.start.Before(back) {
			out.downCalls++
			if c.answered {
				out.downAnswered++
			}
		}
		if c.ok && c.end.After(back) && (out.recovery < 0 || c.end.Sub(back) < out.recovery) {
			out.recovery = c.end.Sub(back)
		}
	}
}

// sleep sleeps for d, or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}
