package transport

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// Nodes coalesces the script calls of a client of several servers per
// server: a *redis.ClusterClient per master (the one that serves a call's
// first key's slot, in the cluster client's view of the slots), a
// *redis.Ring per shard (the one that its first key's hash tag maps to).
// A call goes to that server's Coalescer, so that the decisions bound for
// one server share its round trips and its batch calls as they do on one
// server, with the same per-call deadlines. Everything else goes to the
// client as it is (the Scripter methods; ForEachMaster, which loads the
// function library, runs on every shard of a ring).
//
// On a cluster, a call the master refuses with a redirection (MOVED, ASK,
// TRYAGAIN, CLUSTERDOWN, CROSSSLOT: replies that say it did not run) is
// sent once more through the cluster client, which follows the
// redirection and refreshes its view of the slots; within the call's
// deadline (the store's timeout from when the call reached Nodes, or its
// context's deadline if sooner), which finding the server, the call and
// its redirection share. A call that may have run is never sent again.
//
// A server's Coalescer is kept while it serves keys: each new one (a new
// master, a master replaced, a ring's shards set anew) has the servers
// read in the background, and the Coalescers of addresses no longer among
// them are dropped (see sweep), so that servers replaced over a long life
// do not grow Nodes.
type Nodes struct {
	redis.Scripter
	process func(ctx context.Context, cmd redis.Cmder) error // the client's own
	route   func(ctx context.Context, key string) (*redis.Client, error)
	each    func(ctx context.Context, fn func(ctx context.Context, client *redis.Client) error) error
	slots   bool // a cluster: batches span slots (slots.lua), and slots move
	timeout time.Duration
	bounded bool         // the client's sockets stop at a context's deadline
	routed  atomic.Bool  // a call found its server: the cluster client holds the slots
	nodes   sync.Map     // address -> *node
	sweeps  atomic.Int32 // sweeps asked for since the running one started (see sweepSoon)
}

// nodeInFlight is how many calls or pipelines may be in flight at once to
// one server. Each server's pipelines carry only its share of the
// decisions, so one in flight per server lets them fill; a second is no
// faster (measured in docs/performance.md).
const nodeInFlight = 1

// node is one server's Coalescer, for the client that the cluster client
// or the ring holds for it (a server they replaced gets a new one).
type node struct {
	client *redis.Client
	*Coalescer
}

// ClusterNodes returns Nodes on cc's masters, whose calls last at most
// timeout each.
func ClusterNodes(cc *redis.ClusterClient, timeout time.Duration) *Nodes {
	return &Nodes{Scripter: cc, process: cc.Process, route: cc.MasterForKey, each: cc.ForEachMaster, slots: true,
		timeout: timeout, bounded: cc.Options().ContextTimeoutEnabled}
}

// RingNodes returns Nodes on r's shards, whose calls last at most timeout
// each.
func RingNodes(r *redis.Ring, timeout time.Duration) *Nodes {
	route := func(_ context.Context, key string) (*redis.Client, error) { return r.GetShardClientForKey(key) }
	return &Nodes{Scripter: r, process: r.Process, route: route, each: r.ForEachShard,
		timeout: timeout, bounded: r.Options().ContextTimeoutEnabled}
}

// ForEachMaster calls fn on every master of a cluster, every shard of a
// ring, concurrently, until the call's deadline (see within), and returns
// the first error.
func (n *Nodes) ForEachMaster(ctx context.Context, fn func(ctx context.Context, client *redis.Client) error) error {
	return n.within(ctx, Deadline(ctx, n.timeout), func(ctx context.Context) error { return n.each(ctx, fn) })
}

// Process sends cmd through its server's Coalescer, and once more through
// the client after a redirection, all within the call's deadline.
func (n *Nodes) Process(ctx context.Context, cmd redis.Cmder) error {
	deadline := Deadline(ctx, n.timeout)
	key, ok := firstKey(cmd)
	if !ok {
		return n.redirect(ctx, deadline, cmd)
	}
	if !n.routed.Load() {
		// Finding the server may read the slots first: the call keeps
		// what is left of the deadline (a context, until routes are known).
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, deadline)
		defer cancel()
	}
	server, err := n.server(ctx, deadline, key)
	if err != nil {
		cmd.SetErr(err)
		return err
	}
	if err = n.coalescerOf(server).Process(ctx, cmd); n.slots && redirected(err) {
		return n.redirect(ctx, deadline, cmd) // it did not run
	}
	return err
}

// server is the server of key. Until a call has found its server, the
// cluster client may first have to read the cluster's slots, which
// happens within the call's deadline (see within); then it has them, and
// finding a server reads nothing.
func (n *Nodes) server(ctx context.Context, deadline time.Time, key string) (*redis.Client, error) {
	if n.routed.Load() {
		return n.route(ctx, key)
	}
	var server *redis.Client
	err := n.within(ctx, deadline, func(ctx context.Context) (err error) {
		server, err = n.route(ctx, key)
		return err
	})
	if err != nil {
		return nil, err // server may still be written in the background
	}
	n.routed.Store(true)
	return server, nil
}

// coalescerOf returns the Coalescer of server.
func (n *Nodes) coalescerOf(server *redis.Client) *Coalescer {
	addr := server.Options().Addr
	if v, ok := n.nodes.Load(addr); ok && v.(*node).client == server {
		return v.(*node).Coalescer
	}
	c := server
	if !n.bounded {
		c = Bounded(c, n.timeout) // socket reads and writes stop at a call's deadline
	}
	fresh := &node{client: server, Coalescer: NewCoalescer(Client{Client: c}, n.timeout, nil)}
	fresh.slots, fresh.most = n.slots, nodeInFlight
	n.nodes.Store(addr, fresh) // a racing call's Coalescer serves its own calls to the end
	n.sweepSoon()              // the servers changed: some may have left
	return fresh.Coalescer
}

// sweepSoon sweeps on a goroutine of its own, unless a sweep runs, which
// then sweeps once more when it ends: a new server's Coalescer is the sign
// that the servers changed (a master replaced, slots moved, a ring's shards
// set anew), and over a long life the servers that left would otherwise
// keep theirs.
func (n *Nodes) sweepSoon() {
	if n.sweeps.Add(1) > 1 {
		return
	}
	go func() {
		for {
			asked := n.sweeps.Load()
			n.sweep()
			if n.sweeps.Add(-asked) == 0 {
				return
			}
		}
	}()
}

// sweep drops the Coalescers of the addresses that are not among the
// servers now: a cluster's masters that serve slots (the cluster client
// reads them again, within the store's timeout), a ring's shards that are
// up (a shard down gets a new Coalescer when it is back). A call in flight
// on a Coalescer dropped keeps it, and finishes there; the next call to its
// address, if it serves again, makes a new one. Nothing is dropped when
// the servers could not be read.
func (n *Nodes) sweep() {
	var mu sync.Mutex
	serving := map[string]bool{}
	err := n.ForEachMaster(context.Background(), func(_ context.Context, server *redis.Client) error {
		mu.Lock()
		defer mu.Unlock()
		serving[server.Options().Addr] = true
		return nil
	})
	if err != nil {
		return
	}
	n.nodes.Range(func(addr, v any) bool {
		if !serving[addr.(string)] {
			n.nodes.CompareAndDelete(addr, v)
		}
		return true
	})
}

// redirect sends cmd through the client itself, which follows a
// cluster's redirections, until deadline, the call's (see within; cmd is
// not to be read after a timeout).
func (n *Nodes) redirect(ctx context.Context, deadline time.Time, cmd redis.Cmder) error {
	return n.within(ctx, deadline, func(ctx context.Context) error { return n.process(ctx, cmd) })
}

// within runs f until deadline, the call's (see Deadline): on a client
// whose sockets ignore deadlines, it returns at the deadline while f ends
// in the background.
func (n *Nodes) within(ctx context.Context, deadline time.Time, f func(ctx context.Context) error) error {
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	if n.bounded {
		return f(ctx)
	}
	return untilDone(ctx, f)
}

// untilDone runs f(ctx) on a goroutine of its own and returns its error,
// or ctx's once ctx ends first: for a client whose calls do not stop at
// ctx's deadline. f may then still run; what it writes must not be read.
func untilDone(ctx context.Context, f func(ctx context.Context) error) error {
	done := make(chan error, 1)
	go func() { done <- f(ctx) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// firstKey is a script or function call's first key.
func firstKey(cmd redis.Cmder) (string, bool) {
	args := cmd.Args()
	if len(args) < 4 {
		return "", false
	}
	switch args[0] {
	case "evalsha", "eval", "fcall", "evalsha_ro", "eval_ro", "fcall_ro":
	default:
		return "", false
	}
	if n, ok := args[2].(int); !ok || n < 1 {
		return "", false
	}
	key, ok := args[3].(string)
	return key, ok
}

// redirected reports a reply that says the node did not run the call and
// another may: the slot moved or is moving, or the cluster is down, as
// the node answered the call or, in a batch (slots.lua), a stack's first
// read of a key (a stack whose keys this node does not serve fails there,
// before it writes anything).
func redirected(err error) bool {
	var reply redis.Error
	if !errors.As(err, &reply) {
		return false
	}
	msg := reply.Error()
	for _, prefix := range []string{"MOVED ", "ASK ", "TRYAGAIN ", "CLUSTERDOWN ", "CROSSSLOT "} {
		if strings.HasPrefix(msg, prefix) {
			return true
		}
	}
	return strings.Contains(msg, "Script attempted to access a non local key") ||
		strings.Contains(msg, "Script attempted to execute a command while the cluster is down")
}
