// Package redisstore is the store.Store on Redis: each Decide is one run of the decision
// script, so all its checks are decided atomically in one round trip. On
// Redis 7 and later the scripts run as functions of one library (FCALL),
// loaded on first use and again after "Function not found" (a restart,
// FUNCTION FLUSH), on every master of a cluster: its helpers are created
// once, not on every run. Where functions are not available (Redis 6,
// miniredis, an ACL refusing FCALL or FUNCTION) the store runs them as
// scripts (EVALSHA, or EVAL after NOSCRIPT) from the first such answer on,
// and tries functions again a minute later; an ACL refusing the keys is an
// error, not a reason to switch. See WithFunctions. The library's
// name carries a hash of its code, so two versions of an application never
// replace each other's during a rolling deploy (each leaves its library
// behind: FUNCTION DELETE removes one).
//
// On a *redis.Client, decisions are coalesced: one made while fewer than
// two are in flight goes straight to Redis; those that arrive meanwhile
// leave together when one returns, as one call of the library's batch
// function, which decides each of them as its own call would (one atomic
// run per stack, in order), so under load a round trip and a function call
// carry many decisions (fewer system calls and reads on the client, less
// work per decision on Redis), with no added wait at low load. Each keeps
// its own deadline. WithCoalescing(false) turns it off.
// Given go-redis's AutoPipeliner (either face) on one server, the store
// coalesces the same way: a lone decision is submitted to the deferred
// face of its client (AsyncAutoPipeline) and waits for its reply only
// until its deadline (once submitted it stays in the AutoPipeliner's batch
// and may still run); a batch goes out as a plain pipeline on the same
// client (AutoPipeliner.Pipeline), which the AutoPipeliner's engine would
// only queue again. On a *redis.ClusterClient decisions are coalesced per
// master: each call goes to the master that serves its slot (the cluster
// client's view of the slots), and what queues for one master leaves as
// one call of the library's slots function, the batch function for stacks
// of several slots of one node (the call declares one key and carries the
// others; each stack's own keys share a slot). A call or a stack of a
// batch that the master refuses because its slot moved (MOVED, ASK,
// TRYAGAIN, CLUSTERDOWN, or a batch's stack whose key is no longer there,
// refused at its first read, before it writes anything) did not run, and
// goes once more through the cluster client, which follows the
// redirection; within its deadline. A *redis.Ring is coalesced per shard
// the same way (the shard its hash tag maps to; its batches are plain
// batch calls). A *redis.Client of one cluster node (WithCluster) sends
// its batches as calls of the slots function, as a master's are. Hooks
// added to the cluster client or the ring itself do
// not see these calls; hooks on their node clients (NewClient, OnNewNode)
// do, when ContextTimeoutEnabled is set (see below). Other clients are
// used as they are.
//
// Each call is bounded by the store's timeout (WithTimeout), or by its
// caller's context deadline if sooner, even though go-redis ignores
// context deadlines for socket I/O unless ContextTimeoutEnabled is set: a
// *redis.Client is used through rdb.WithTimeout(timeout), a clone sharing
// its connection pool with ContextTimeoutEnabled set on the clone's
// options, so every read and write stops at the call's deadline
// (go-redis's clone runs none of the client's hooks, tracing
// instrumentation included: set ContextTimeoutEnabled on the client to
// keep them); calls through an
// AutoPipeliner stop waiting at it (a batch's pipeline may wait for the
// client's ReadTimeout, but its calls return at their deadline); other
// clients without ContextTimeoutEnabled get a guard goroutine per call.
//
// A decision that a replica refuses (READONLY, MASTERDOWN: a Sentinel
// failover under way), a server loading its dataset refuses (LOADING), a
// Cluster that does not serve its slot for now (CLUSTERDOWN, TRYAGAIN) or
// a master short of replicas in sync (NOREPLICAS) did not run, and
// go-redis does not send a script call again: the store sends it again,
// after pauses of 2 ms doubling up to 32 ms, within its deadline. go-redis
// closes a connection that answered READONLY, so the call sent again dials
// a new one, which a failover client makes to the master the Sentinel
// names then.
//
// On a *redis.Client for one server, the store adds a dial hook to the
// client (its connection pool dials with the client's own hooks): go-redis
// redials a refused address in the background until the call's deadline,
// and the call would see only the timeout. When a dial fails (connection
// refused, host unreachable), the store's calls in flight fail at once with
// the dial's error, and a call that timed out while the latest dial had
// failed carries that dial's error as its cause (still
// context.DeadlineExceeded to errors.Is).
//
// On Redis Cluster (a *redis.ClusterClient, or any client with WithCluster)
// checks are grouped by hash slot, and on a *redis.Ring by hash tag (a Ring
// runs a script on its first key's shard). Each group is one atomic script
// run. When a stack spans several slots, the first group reads the clock
// and the others decide at the same instant, concurrently; if any group
// denies, the groups that consumed give it back (refund.lua). This never
// admits more than the limits allow, but a request that races a refund may
// be denied where an atomic decision would have admitted it, and a refund
// lost to a network failure leaves its consumption in place (stricter,
// never looser). After a network error the store asks the cluster client
// to reload the topology, so a failed-over master is left quickly.
//
// The store is a store.Remote: a Limiter on it marks Redis down after
// repeated failures (limiter.WithRetryInterval) and caches denials
// (limiter.WithDenyCache).
package redisstore
