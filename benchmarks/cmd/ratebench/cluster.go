package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"

	"github.com/seed-bff0c9e1/ratelimit/benchmarks/internal/redisproc"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/redisstore"
)

// The cluster mode: three redis-server masters in cluster mode on free
// loopback ports, joined by redis-cli --cluster create, and the allow
// mode's quota decided on a go-redis ClusterClient by our limiter (one
// rule, and a per-key rule stacked with a global one) and by redis_rate.

// clusterContender decides on a cluster client.
type clusterContender struct {
	name  string
	build func(cc *redis.ClusterClient, q quota) (decideFunc, error)
}

func clusterContenders() []clusterContender {
	return []clusterContender{
		{"raw EVALSHA (INCR)", func(cc *redis.ClusterClient, _ quota) (decideFunc, error) {
			script := redis.NewScript(`return redis.call("INCR", KEYS[1])`)
			return func(ctx context.Context, key string) (bool, error) {
				return true, script.Run(ctx, cc, []string{"raw:" + key}).Err()
			}, nil
		}},
		{"ours gcra", func(cc *redis.ClusterClient, q quota) (decideFunc, error) {
			store, err := redisstore.New(cc)
			if err != nil {
				return nil, err
			}
			return allowFunc(limiter.New(store, []limiter.Rule{{Name: "r", Algorithm: gcra(q)}}, limiter.WithPrefix("c1")))
		}},
		{"ours per-key + global", func(cc *redis.ClusterClient, q quota) (decideFunc, error) {
			return perKeyAndGlobal(cc, q, 0, "c2")
		}},
		{"ours per-key + leased global", func(cc *redis.ClusterClient, q quota) (decideFunc, error) {
			return perKeyAndGlobal(cc, q, globalLease, "c3")
		}},
		{"redis_rate (gcra)", func(cc *redis.ClusterClient, q quota) (decideFunc, error) {
			return clusterRedisRate(redis_rate.NewLimiter(cc), q), nil
		}},
		{"redis_rate, autopipelined", func(cc *redis.ClusterClient, q quota) (decideFunc, error) {
			ap, err := cc.AutoPipeline()
			if err != nil {
				return nil, err
			}
			return clusterRedisRate(redis_rate.NewLimiter(apRediser{ap, cc}), q), nil
		}},
	}
}

// clusterRedisRate is redis_rate's decision for the allow mode's quota.
func clusterRedisRate(l *redis_rate.Limiter, q quota) decideFunc {
	limit := redis_rate.Limit{Rate: q.limit, Burst: q.limit, Period: q.period}
	return func(ctx context.Context, key string) (bool, error) {
		res, err := l.Allow(ctx, key, limit)
		return err == nil && res.Allowed > 0, err
	}
}

// clusterBench runs the cluster mode and returns the medians by contender
// name, nil when no cluster could be started (the reason is printed).
func clusterBench(goroutines, nkeys int, d time.Duration, rounds int, only string) map[string]stats {
	cc, stop, err := redisproc.StartCluster(3, goroutines+8)
	if err != nil {
		fmt.Printf("\n## mode cluster: skipped (%v)\n", err)
		return nil
	}
	defer atExit(stop)() // fatal stops the cluster too
	defer cc.Close()
	var list []clusterContender
	for _, c := range clusterContenders() {
		if chosen(c.name, only) || c.name == "raw EVALSHA (INCR)" {
			list = append(list, c)
		}
	}
	q, _, _ := modeQuota("allow", nkeys)
	ctx := context.Background()
	results := make([][]stats, len(list))
	calls := make([][]float64, len(list)) // script calls per decision on each master, last round
	usec := make([][]float64, len(list))  // Redis µs in scripts per decision on each master, last round
	for r := range rounds {
		if err := cc.ForEachMaster(ctx, func(ctx context.Context, n *redis.Client) error { return n.FlushAll(ctx).Err() }); err != nil {
			fatal(err)
		}
		for i := range list {
			j := (i + r) % len(list)
			decide, err := list[j].build(cc, q)
			if err != nil {
				fatalf("%s: %v", list[j].name, err)
			}
			nodes := redisproc.Masters(ctx, cc)
			for _, n := range nodes {
				_ = n.ConfigResetStat(ctx).Err()
			}
			s := measure(decide, goroutines, keyNames(fmt.Sprintf("cluster:r%d:c%d:", r, j), nkeys), d)
			results[j] = append(results[j], s)
			calls[j], usec[j] = calls[j][:0], usec[j][:0]
			for _, n := range nodes {
				calls[j] = append(calls[j], redisproc.ScriptCalls(ctx, n)/float64(max(1, s.decisions)))
				usec[j] = append(usec[j], redisproc.ScriptUsec(ctx, n)/float64(max(1, s.decisions)))
			}
		}
	}
	if n, err := cc.MasterForKey(ctx, globalTag); err == nil {
		for i, m := range redisproc.Masters(ctx, cc) {
			if m.Options().Addr == n.Options().Addr {
				targets.globalMaster = i
			}
		}
	}
	targets.clusterUsec = map[string][]float64{}
	for i, c := range list {
		targets.clusterUsec[c.name] = usec[i]
	}
	fmt.Printf("\n## mode cluster (3 masters, %d per %v, %d keys; the global key on master %d)\n\n", q.limit, q.period, nkeys, targets.globalMaster+1)
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "contender\tops/s\tx raw\terrors\tp50\tp99\tscript calls per decision, by master\tRedis µs per decision, by master\t")
	base := median(results[0])
	out := map[string]stats{}
	for i, c := range list {
		m := median(results[i])
		out[c.name] = m
		fmt.Fprintf(w, "%s\t%.0f\t%.2f\t%d\t%v\t%v\t%s\t%s\t\n", c.name, m.ops, m.ops/base.ops, m.err, m.p50.Round(time.Microsecond), m.p99.Round(time.Microsecond),
			joined(calls[i]), joined(usec[i]))
	}
	w.Flush()
	return out
}

// joined formats numbers with two decimals, space-separated.
func joined(v []float64) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprintf("%.2f", x)
	}
	return strings.Join(s, " ")
}
