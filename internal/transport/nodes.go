package transport

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Nodes coalesces a cluster client's script calls per master: a call goes
// to the Coalescer of the master that serves its first key's slot (the
// cluster client's own view of the slots), so that the decisions bound for
// one node share its round trips and its batch calls as they do on one
// server, with the same per-call deadlines. Everything else goes to the
// cluster client as it is (ForEachMaster, the Scripter methods).
//
// A call the node refuses with a redirection (MOVED, ASK, TRYAGAIN,
// CLUSTERDOWN, CROSSSLOT: replies that say it did not run) is sent once
// more through the cluster client, which follows the redirection and
// refreshes its view of the slots; within the call's deadline. A call that
// may have run is never sent again.
type Nodes struct {
	*redis.ClusterClient
	timeout time.Duration
	bounded bool     // the cluster client's sockets stop at a context's deadline
	nodes   sync.Map // address -> *node
}

// nodeInFlight is how many calls or pipelines may be in flight at once to
// one master. Each node's pipelines carry only its share of the decisions,
// so one in flight per node lets them fill (ratebench, cluster mode, three
// masters on the client's 2 cores, two pairs of runs: ours / redis_rate
// 1.77x and 1.80x with one, 1.71x and 1.71x with two).
const nodeInFlight = 1

// node is one master's Coalescer, for the client the cluster client holds
// for it (a node the cluster client replaced gets a new one).
type node struct {
	client *redis.Client
	*Coalescer
}

// NewNodes returns Nodes on cc, whose calls last at most timeout each.
func NewNodes(cc *redis.ClusterClient, timeout time.Duration) *Nodes {
	return &Nodes{ClusterClient: cc, timeout: timeout, bounded: cc.Options().ContextTimeoutEnabled}
}

// Process sends cmd through its master's Coalescer.
func (n *Nodes) Process(ctx context.Context, cmd redis.Cmder) error {
	key, ok := firstKey(cmd)
	if !ok {
		return n.redirect(ctx, cmd)
	}
	master, err := n.MasterForKey(ctx, key)
	if err != nil {
		cmd.SetErr(err)
		return err
	}
	if err = n.coalescerOf(master).Process(ctx, cmd); redirected(err) {
		return n.redirect(ctx, cmd) // it did not run
	}
	return err
}

// coalescerOf returns the Coalescer of master.
func (n *Nodes) coalescerOf(master *redis.Client) *Coalescer {
	addr := master.Options().Addr
	if v, ok := n.nodes.Load(addr); ok && v.(*node).client == master {
		return v.(*node).Coalescer
	}
	c := master
	if !n.bounded {
		c = c.WithTimeout(n.timeout) // socket reads and writes stop at the timeout
	}
	fresh := &node{client: master, Coalescer: NewCoalescer(Client{Client: c}, n.timeout, nil)}
	fresh.slots, fresh.most = true, nodeInFlight
	n.nodes.Store(addr, fresh) // a racing call's Coalescer serves its own calls to the end
	return fresh.Coalescer
}

// redirect sends cmd through the cluster client, until the call's
// deadline (see deadline): on a client whose sockets ignore deadlines,
// it returns at the deadline while the call ends in the background (cmd
// is then not to be read).
func (n *Nodes) redirect(ctx context.Context, cmd redis.Cmder) error {
	ctx, cancel := context.WithDeadline(ctx, deadline(ctx, n.timeout))
	defer cancel()
	if n.bounded {
		return n.ClusterClient.Process(ctx, cmd)
	}
	done := make(chan error, 1)
	go func() { done <- n.ClusterClient.Process(ctx, cmd) }()
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
