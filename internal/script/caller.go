package script

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seed-bff0c9e1/ratelimit/internal/fault"
)

// Mode says how a Caller runs the scripts.
type Mode int32

const (
	// Auto calls the Library's functions (FCALL) and, where the server has
	// none (Redis before 7, miniredis, an ACL without FUNCTION or FCALL),
	// runs the scripts with EVALSHA, trying functions again once every
	// FunctionsRetry.
	Auto Mode = iota
	// OnlyFunctions calls the Library's functions only.
	OnlyFunctions
	// OnlyScripts runs the scripts with EVALSHA (EVAL after NOSCRIPT) only.
	OnlyScripts
)

// detected modes, stored in Caller.state.
const (
	undecided int32 = iota
	useFunctions
	useScripts
)

// FunctionsRetry is how long a Caller in Auto mode runs scripts, after an
// answer that said functions are unavailable, before it tries them again
// (the ACL may have been fixed, the server upgraded).
const FunctionsRetry = time.Minute

// Caller runs the scripts on a client: as functions of the Library where
// the server has them, which spares Redis creating every helper again on
// each run, else with EVALSHA. It loads the Library lazily, on the first
// call and again after "Function not found" (a restart, FUNCTION FLUSH, a
// node that never had it), on every master of a cluster or shard of a
// ring (through an AutoPipeliner, which names none, on the server of the
// call's key). It falls back to scripts only on an answer that says
// functions are unavailable (an unknown command, an ACL refusing FCALL or
// FUNCTION: not one refusing keys, which scripts are refused as well), and
// tries functions again after FunctionsRetry. A call that may have run is
// never sent again: a call is retried only after an error that says it
// did not run, and what it sends then (a library load, the call again, the
// script's source; the call again after pauses while the server refuses
// it for now, with READONLY or LOADING) stays within the first send's
// deadline: its context's, or timeout from when it reached Run if sooner.
type Caller struct {
	rdb     redis.Scripter
	forced  Mode
	timeout time.Duration // bounds a call and what it sends again (0: its context alone)
	state   atomic.Int32
	retry   time.Duration // how long scripts run before functions are tried again: FunctionsRetry
	retryAt atomic.Int64  // while on scripts: when to try functions again (Unix nanoseconds)
}

// NewCaller returns a Caller on rdb in mode, whose calls, with what they
// send again, last at most timeout (0: as long as their contexts allow).
func NewCaller(rdb redis.Scripter, mode Mode, timeout time.Duration) *Caller {
	c := &Caller{rdb: rdb, forced: mode, timeout: timeout, retry: FunctionsRetry}
	switch mode {
	case OnlyFunctions:
		c.state.Store(useFunctions)
	case OnlyScripts:
		c.state.Store(useScripts)
	}
	return c
}

// Run runs s with call's keys and arguments, and sends it again while the
// server refuses it for now (see refusedForNow), within the first send's
// deadline; past it, such a refusal is returned marked fault.NotRun.
func (c *Caller) Run(ctx context.Context, s *Script, call Call) (any, error) {
	var deadline time.Time // of the first send, for the sends that follow
	if c.timeout > 0 {
		deadline = time.Now().Add(c.timeout)
	}
	v, err := c.run(ctx, deadline, s, call)
	for pause := firstPause; refusedForNow(err) && wait(ctx, deadline, pause); pause = min(2*pause, maxPause) {
		ctx, cancel := within(ctx, deadline)
		v, err = c.run(ctx, deadline, s, call)
		cancel()
	}
	if refusedForNow(err) {
		err = fault.NotRun(err) // for those who may send it again later (a slot's release)
	}
	return v, err
}

// run is one send of Run, with what it sends again at once: after
// NOSCRIPT, "Function not found" or an answer that functions are
// unavailable.
func (c *Caller) run(ctx context.Context, deadline time.Time, s *Script, call Call) (any, error) {
	if c.state.Load() == useScripts && !c.retrying() {
		return s.run(ctx, deadline, c.rdb, call)
	}
	lib := Library()
	fn := lib.functions[s.driver]
	v, err := run(ctx, c.rdb, "fcall", fn, call)
	if err != nil && redis.HasErrorPrefix(err, "Function not found") {
		// Nothing ran: load the library and call again.
		ctx, cancel := within(ctx, deadline)
		if err = c.load(ctx, lib, call); err == nil {
			v, err = run(ctx, c.rdb, "fcall", fn, call)
		}
		cancel()
	}
	switch {
	case err == nil:
		if c.state.Load() != useFunctions { // the first call, or the one that tried functions again
			c.state.Store(useFunctions)
		}
		return v, nil
	case c.forced == Auto && unsupported(err):
		// The server cannot run functions (nothing ran): scripts until
		// retryAt.
		c.retryAt.Store(time.Now().Add(c.retry).UnixNano())
		c.state.Store(useScripts)
		ctx, cancel := within(ctx, deadline)
		defer cancel()
		return s.run(ctx, deadline, c.rdb, call)
	}
	return v, Clean(err)
}

// within is ctx for what a call sends after its first send: ended at
// deadline, the first send's (none when zero), or ctx's own if sooner.
func within(ctx context.Context, deadline time.Time) (context.Context, context.CancelFunc) {
	if deadline.IsZero() {
		return ctx, func() {}
	}
	return context.WithDeadline(ctx, deadline)
}

// retrying reports whether this call, on scripts, is the one that tries
// functions again: the first once retryAt has passed (it puts retryAt off
// for the others).
func (c *Caller) retrying() bool {
	if c.forced != Auto {
		return false
	}
	at := c.retryAt.Load()
	now := time.Now().UnixNano()
	return now >= at && c.retryAt.CompareAndSwap(at, now+int64(c.retry))
}

// unsupported reports an error that says the server cannot run or load
// functions: an unknown command or subcommand, or an ACL that refuses
// FCALL or FUNCTION (NOPERM naming the command it refuses to run, not a
// key it refuses: Redis 7.2 quotes the key, which may hold any text). An
// ACL that refuses the keys says nothing of functions: scripts would be
// refused them as well.
func unsupported(err error) bool {
	var reply redis.Error
	if !errors.As(err, &reply) {
		return false
	}
	msg := strings.ToLower(reply.Error())
	if strings.HasPrefix(msg, "noperm") {
		return strings.Contains(msg, "to run the 'fcall") || strings.Contains(msg, "to run the 'function")
	}
	return strings.HasPrefix(msg, "err unknown command") || strings.HasPrefix(msg, "err unknown subcommand")
}

// load loads the library where the client sends commands: on every master
// of a cluster, every shard of a ring, the server of call's first key on a
// client that names no server but routes by key (an AutoPipeliner's
// Deferred face: see keyed), else the one server. A library already there
// is fine.
func (c *Caller) load(ctx context.Context, lib *FunctionLibrary, call Call) error {
	loadOn := func(ctx context.Context, rdb *redis.Client) error {
		return loaded(rdb.FunctionLoad(ctx, lib.Source).Err())
	}
	switch rdb := c.rdb.(type) {
	case masters: // a cluster client, or Nodes
		return rdb.ForEachMaster(ctx, loadOn)
	case *redis.Ring:
		return rdb.ForEachShard(ctx, loadOn)
	case keyed:
		if call.keys > 0 {
			// The server that answered "Function not found".
			return loaded(rdb.ProcessAt(ctx, call.line[3].(string), redis.NewStringCmd(ctx, "function", "load", lib.Source)))
		}
		return loadThrough(ctx, rdb, lib)
	case processor:
		return loadThrough(ctx, rdb, lib)
	}
	return errors.New("ratelimit: client cannot load functions")
}

// loadThrough loads the library with a FUNCTION LOAD sent through p, to
// the server that p sends a command without keys to.
func loadThrough(ctx context.Context, p processor, lib *FunctionLibrary) error {
	cmd := redis.NewStringCmd(ctx, "function", "load", lib.Source)
	_ = p.Process(ctx, cmd)
	return loaded(cmd.Err())
}

// keyed is a client that routes by key but names no server, so that a
// command without keys, such as FUNCTION LOAD, goes to whichever server it
// picks (an AutoPipeliner of a cluster: one of its masters, in turn).
// ProcessAt sends such a command to the server of key and returns its
// error (cmd is not to be read after a context error).
type keyed interface {
	processor
	ProcessAt(ctx context.Context, key string, cmd redis.Cmder) error
}

// masters is a client of a cluster's masters (or of a ring's shards, for
// Nodes).
type masters interface {
	ForEachMaster(ctx context.Context, fn func(ctx context.Context, client *redis.Client) error) error
}

// loaded treats "already exists" as success: another instance loaded the
// same library first.
func loaded(err error) error {
	if err != nil && strings.Contains(err.Error(), "already exists") {
		return nil
	}
	return err
}
