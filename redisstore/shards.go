package redisstore

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seed-bff0c9e1/ratelimit/internal/algo"
	"github.com/seed-bff0c9e1/ratelimit/internal/fault"
	"github.com/seed-bff0c9e1/ratelimit/internal/script"
	"github.com/seed-bff0c9e1/ratelimit/internal/transport"
	"github.com/seed-bff0c9e1/ratelimit/store"
)

// Stacks whose keys live on several servers (Redis Cluster slots, Ring
// shards): one script run per shard, then consume-then-refund.

// reloadTopology asks a cluster client to re-read the cluster's slots after
// a failure that is not a Redis reply (a dead node answers no MOVED, and
// go-redis otherwise waits for its ClusterStateReloadInterval, 60 s by
// default). go-redis debounces the reloads.
func (s *redisStore) reloadTopology(err error) {
	var reply redis.Error
	if c, ok := s.client.(*redis.ClusterClient); ok && !errors.As(err, &reply) {
		c.ReloadState(context.Background())
	}
}

// groupBy groups the indices of checks by the shard of their keys, in order
// of first appearance.
func groupBy[S comparable](checks []store.Check, shard func(k *store.Key) S) [][]int {
	var groups [][]int
	var shards []S
	for i := range checks {
		sh := shard(&checks[i].Key)
		j := 0
		for j < len(shards) && shards[j] != sh {
			j++
		}
		if j == len(shards) {
			shards = append(shards, sh)
			groups = append(groups, nil)
		}
		groups[j] = append(groups[j], i)
	}
	return groups
}

// group is one shard's share of a stack, decided by one script run.
type group struct {
	checks  []store.Check
	results []store.Result
	reply   script.Reply
	err     error
}

func (s *redisStore) decideAcrossShards(ctx context.Context, now time.Time, checks []store.Check, results []store.Result, idx [][]int) (store.Verdict, error) {
	groups := make([]group, len(idx))
	for g, members := range idx {
		gr := &groups[g]
		for _, i := range members {
			gr.checks = append(gr.checks, checks[i])
		}
		gr.results = make([]store.Result, len(members))
	}
	// The first group fixes the instant (its node's TIME, unless passed in);
	// the others decide at that same instant, concurrently.
	first := &groups[0]
	first.reply, first.err = s.run(ctx, script.Now(now), first.checks, first.results, nil)
	if first.err != nil {
		return store.Verdict{}, first.err
	}
	at := strconv.FormatInt(first.reply.Now, 10)
	var wg sync.WaitGroup
	for g := 1; g < len(groups); g++ {
		gr := &groups[g]
		wg.Go(func() { gr.reply, gr.err = s.run(ctx, at, gr.checks, gr.results, nil) })
	}
	wg.Wait()

	allowed := true
	var err error
	for g := range groups {
		allowed = allowed && groups[g].err == nil && groups[g].reply.Allowed
		if err == nil {
			err = groups[g].err
		}
	}
	if !allowed {
		s.refundGroups(ctx, script.Now(now), at, groups)
	}
	if err != nil {
		return store.Verdict{}, err
	}
	for g, members := range idx {
		for j, i := range members {
			results[i] = groups[g].results[j]
		}
	}
	return store.Verdict{Allowed: allowed, At: time.UnixMicro(first.reply.Now)}, nil
}

// refundGroups gives back what the groups that allowed consumed (of their
// shadow checks, those that allowed: only they consumed). A refund
// that fails leaves the consumption in place: stricter, never looser. The
// refunded rules report their Remaining from before the request (a
// queue's, like every rule's ResetAfter and NextAfter, from after it).
func (s *redisStore) refundGroups(ctx context.Context, now, at string, groups []group) {
	// The decision may have used up the caller's deadline; the refund gets
	// its own, so a hung node cannot hang the request.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.timeout)
	defer cancel()
	var refunds []store.Refund
	for g := range groups {
		gr := &groups[g]
		if gr.err != nil || !gr.reply.Allowed {
			continue
		}
		for i, c := range gr.checks {
			if res := &gr.results[i]; c.Cost > 0 && (res.Allowed || !c.Shadow) {
				c.Cost += res.Leased // a lease was taken with the cost
				refunds = append(refunds, store.Refund{Check: c, Back: c.Cost, Token: res.Token})
				if f, _ := algo.FactsOf(c.Algorithm); f.Units { // a queue's turns are not units
					res.Remaining += c.Cost
				}
				res.Token, res.Leased = store.Token{}, 0
			}
		}
	}
	_ = s.refund(ctx, now, at, refunds)
}

// refund runs refund.lua once per shard of refunds, concurrently, at now
// (encoded as script.Now) for a decision at the instant at (µs).
func (s *redisStore) refund(ctx context.Context, now, at string, refunds []store.Refund) error {
	checks := make([]store.Check, len(refunds))
	for i, r := range refunds {
		checks[i] = r.Check
	}
	groups := s.shardGroups(checks)
	calls := make([]script.Call, len(groups))
	for g, members := range groups {
		calls[g] = script.NewCall(2*len(members), script.RefundArgsHead+script.RefundArgsPerRule*len(members))
		for _, i := range members {
			r := refunds[i]
			mark := r.Mark.Key
			if mark == (store.Key{}) { // no mark to read: the state key stands in, unread
				mark = r.Check.Key
			}
			calls[g].Key(r.Check.Key.String())
			calls[g].Key(mark.String())
		}
		calls[g].Arg(now, s.minTTL, at)
		for _, i := range members {
			r := refunds[i]
			p, err := s.paramsOf(&r.Check)
			if err != nil {
				return err
			}
			markTTL, within := any(r.Mark.TTL.Microseconds()), any(r.Within.Microseconds())
			if r.Mark.Key == (store.Key{}) {
				markTTL = ""
			}
			if r.Within <= 0 {
				within = ""
			}
			calls[g].Arg(p.Arg, r.Check.Cost, r.Back, r.Token.Stamp, r.Token.Refunded, r.Token.Epoch, markTTL, within)
		}
	}
	errs := make([]error, len(groups))
	var wg sync.WaitGroup
	for g := range groups {
		wg.Go(func() { _, errs[g] = s.caller.Run(ctx, script.Refund(), calls[g]) })
	}
	wg.Wait()
	if len(groups) == 1 {
		return errs[0]
	}
	// Several round trips: say which refunds failed, for a caller that
	// sends again those that surely never ran (see fault.RefundUnsent).
	var failed *fault.Refunds
	for g, members := range groups {
		if errs[g] == nil {
			continue
		}
		if failed == nil {
			failed = &fault.Refunds{Errs: make([]error, len(refunds))}
		}
		for _, i := range members {
			failed.Errs[i] = errs[g]
		}
	}
	if failed == nil {
		return nil
	}
	return failed
}

// shardGroups groups the indices of checks by the server their keys live
// on: by hash slot on a cluster, by hash tag on a ring, all together on
// one server.
func (s *redisStore) shardGroups(checks []store.Check) [][]int {
	// A key's hash tag is its rule and identity (see store.Key): the
	// shard is found from them, without building the key's name.
	switch s.shards {
	case bySlot:
		return groupBy(checks, func(k *store.Key) uint16 { return transport.TagSlot(k.Rule, ":", k.Identity) })
	case byTag:
		return groupBy(checks, func(k *store.Key) [2]string { return [2]string{k.Rule, k.Identity} })
	}
	return groupBy(checks, func(*store.Key) struct{} { return struct{}{} })
}
