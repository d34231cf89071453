// Command leasesim simulates a fleet of app instances sharing a global
// limit, leased and unleased, against a redis-server and a 3-master Redis
// Cluster it starts on free loopback ports.
//
// Each of N instances has its own go-redis client, Redis store and
// limiter, and stacks a per-key rule (generous, over -users identities)
// with a global GCRA of -limit a second. Demand is -demand times the limit,
// skewed: instance 0 takes -skew of it, the others share the rest evenly.
// The unleased baseline runs for -base, the leased fleet for -d, with the
// last instance killed halfway (its client closed without giving its
// lease back). It prints, per topology: the fleet's admissions against
// the limit's exact bound (units allowed since the first decision; Redis's
// own state after the live instances closed tells what was consumed),
// what share of what the limit allows was admitted, the script calls on
// the node of the global key per decision (INFO commandstats; on the
// Cluster, the per-key identities are chosen on the other masters), and
// the admissions per 100 ms after the kill.
//
//	go run ./cmd/leasesim            # from benchmarks/ (make leasesim)
//	go run ./cmd/leasesim -d 3s -base 1s
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/benchmarks/internal/redisproc"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/redisstore"
	"github.com/seed-bff0c9e1/ratelimit/store"
)

// config is the simulation's flags.
type config struct {
	instances, limit, users, workers int
	demand, skew                     float64
	d, base, lease                   time.Duration
}

func main() {
	var c config
	flag.IntVar(&c.instances, "n", 8, "app instances")
	flag.IntVar(&c.limit, "limit", 20_000, "the global limit, per second")
	flag.Float64Var(&c.demand, "demand", 2, "total demand, times the limit")
	flag.Float64Var(&c.skew, "skew", 0.5, "share of the demand on instance 0")
	flag.IntVar(&c.users, "users", 1000, "per-key identities")
	flag.IntVar(&c.workers, "workers", 24, "goroutines per instance")
	flag.DurationVar(&c.d, "d", 10*time.Second, "leased run")
	flag.DurationVar(&c.base, "base", 3*time.Second, "unleased run")
	flag.DurationVar(&c.lease, "lease", 500*time.Millisecond, "the global rule's lease")
	topologies := flag.String("topologies", "standalone,cluster", "standalone, cluster, or both")
	flag.Parse()
	fmt.Printf("leasesim %s: %d instances, global GCRA %d/s (burst %d), demand %.1fx skewed %.0f%% to one instance, per-key rule over %d identities, lease %v\n",
		time.Now().Format("2006-01-02"), c.instances, c.limit, burst(c.limit), c.demand, 100*c.skew, c.users, c.lease)
	for _, t := range strings.Split(*topologies, ",") {
		var err error
		switch t {
		case "standalone":
			err = standalone(c)
		case "cluster":
			err = cluster(c)
		default:
			err = fmt.Errorf("unknown topology %q", t)
		}
		if err != nil {
			log.Fatal(err)
		}
	}
}

// burst is the global GCRA's burst: a tenth of a second of the limit.
func burst(limit int) int { return max(1, limit/10) }

// fleet is what a topology gives the simulation.
type fleet struct {
	name   string
	client func() redis.UniversalClient // a new client, one per instance
	global *redis.Client                // the node of the global key
	users  []string                     // per-key identities (not on the global node, on a Cluster)
}

func standalone(c config) error {
	addr, stop, err := redisproc.Start()
	if err != nil {
		return err
	}
	defer stop()
	node := redis.NewClient(&redis.Options{Addr: addr})
	defer node.Close()
	users := make([]string, c.users)
	for i := range users {
		users[i] = "u" + strconv.Itoa(i)
	}
	return simulate(c, fleet{name: "one redis-server", global: node, users: users,
		client: func() redis.UniversalClient {
			return redis.NewClient(&redis.Options{Addr: addr, PoolSize: c.workers + 8})
		}})
}

func cluster(c config) error {
	cc, stop, err := redisproc.StartCluster(3, 8)
	if err != nil {
		return err
	}
	defer stop()
	defer cc.Close()
	ctx := context.Background()
	global, err := cc.MasterForKey(ctx, globalKey)
	if err != nil {
		return err
	}
	var users []string
	for i := 0; len(users) < c.users; i++ {
		u := "u" + strconv.Itoa(i)
		n, err := cc.MasterForKey(ctx, "{per-key:"+u+"}")
		if err != nil {
			return err
		}
		if n.Options().Addr != global.Options().Addr {
			users = append(users, u)
		}
	}
	addrs := []string{}
	for _, m := range redisproc.Masters(ctx, cc) {
		addrs = append(addrs, m.Options().Addr)
	}
	return simulate(c, fleet{name: "3-master Cluster", global: global, users: users,
		client: func() redis.UniversalClient {
			return redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, PoolSize: c.workers + 8})
		}})
}

// globalKey is the hash tag of the global rule's key.
const globalKey = "{global:all}"

// run is one fleet's run.
type run struct {
	decisions, admitted, errs atomic.Int64
	globalCalls               atomic.Int64   // store calls that carry the global rule
	slots                     []atomic.Int64 // admitted per 100 ms
	lat                       [][]time.Duration
	start                     time.Time
}

func simulate(c config, f fleet) error {
	fmt.Printf("\n%s (global key's node %s)\n", f.name, f.global.Options().Addr)
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "fleet\tdecisions/s\tadmitted/s\tadmitted / allowed\tscript calls on the global node / decision\tstore calls with the global key / decision\tp50\tp99\terrors\t")
	for _, leased := range []bool{false, true} {
		d := c.base
		if leased {
			d = c.d
		}
		r, calls, allowed, consumed, err := fleetRun(c, f, leased, d)
		if err != nil {
			return err
		}
		name := "unleased"
		if leased {
			name = "leased " + c.lease.String()
		}
		elapsed := d.Seconds()
		all := slices.Concat(r.lat...)
		slices.Sort(all)
		p50, p99 := time.Duration(0), time.Duration(0)
		if n := len(all); n > 0 {
			p50, p99 = all[n/2], all[n*99/100]
		}
		decisions := float64(max(1, r.decisions.Load()))
		fmt.Fprintf(w, "%s\t%.0f\t%.0f\t%.4f\t%.4f\t%.4f\t%v\t%v\t%d\t\n", name, float64(r.decisions.Load())/elapsed, float64(r.admitted.Load())/elapsed,
			float64(r.admitted.Load())/float64(allowed), calls/decisions, float64(r.globalCalls.Load())/decisions, p50.Round(time.Microsecond), p99.Round(time.Microsecond), r.errs.Load())
		w.Flush()
		verdict := "within"
		if r.admitted.Load() > allowed || consumed > allowed {
			verdict = "ABOVE"
		}
		fmt.Printf("  %s: admitted %d, consumed in Redis %d, exact bound %d (burst + limit x elapsed): %s\n", name, r.admitted.Load(), consumed, allowed, verdict)
		if leased {
			killed(c, r)
		}
	}
	return nil
}

// fleetRun runs the fleet for d and returns the run, the script calls on
// the global key's node, the units the global rule allowed over the run
// and those Redis consumed, read from its state once the live instances
// have closed.
func fleetRun(c config, f fleet, leased bool, d time.Duration) (*run, float64, int64, int64, error) {
	ctx := context.Background()
	prefix := limiter.WithPrefix(fmt.Sprintf("sim%d", time.Now().UnixNano()))
	global := algorithms.GCRA{Rate: c.limit, Period: time.Second, Burst: burst(c.limit)}
	rules := []limiter.Rule{
		{Name: "per-key", Algorithm: algorithms.TokenBucket{Capacity: 1000, Rate: 1000, Period: time.Second}},
		{Name: "global", Algorithm: global},
	}
	if leased {
		rules[1].Lease = c.lease
	}
	type instance struct {
		lim  *limiter.Limiter
		rdb  redis.UniversalClient
		stop chan struct{}
		done sync.WaitGroup
	}
	r := &run{slots: make([]atomic.Int64, int(d/(100*time.Millisecond))+2), lat: make([][]time.Duration, c.instances*c.workers)}
	fleet := make([]*instance, c.instances)
	for i := range fleet {
		rdb := f.client()
		store, err := redisstore.New(rdb)
		if err != nil {
			return nil, 0, 0, 0, err
		}
		lim, err := limiter.New(counted{store, &r.globalCalls}, rules, prefix)
		if err != nil {
			return nil, 0, 0, 0, err
		}
		fleet[i] = &instance{lim: lim, rdb: rdb, stop: make(chan struct{})}
	}
	if err := f.global.ConfigResetStat(ctx).Err(); err != nil {
		return nil, 0, 0, 0, err
	}
	r.start = time.Now()
	for i, in := range fleet {
		share := (1 - c.skew) / float64(c.instances-1)
		if i == 0 {
			share = c.skew
		}
		perSecond := c.demand * float64(c.limit) * share
		work := make(chan struct{}, 1<<16)
		in.done.Go(func() { dispatch(perSecond, work, in.stop) })
		for g := range c.workers {
			in.done.Go(func() {
				own := make([]time.Duration, 0, 1<<14)
				defer func() { r.lat[i*c.workers+g] = own }()
				for n := g; ; n++ {
					select {
					case <-in.stop:
						return
					case <-work:
					}
					t0 := time.Now()
					dec, err := in.lim.Decide(ctx,
						limiter.Check{Rule: "per-key", Identity: f.users[(n*c.workers+g)%len(f.users)], Cost: 1},
						limiter.Check{Rule: "global", Identity: "all", Cost: 1})
					own = append(own, time.Since(t0))
					r.decisions.Add(1)
					switch {
					case err != nil:
						r.errs.Add(1)
					case dec.Allowed:
						r.admitted.Add(1)
						if s := int(time.Since(r.start) / (100 * time.Millisecond)); s < len(r.slots) {
							r.slots[s].Add(1)
						}
					}
				}
			})
		}
	}
	// The last instance dies halfway, its leases unreturned.
	time.Sleep(d / 2)
	last := fleet[len(fleet)-1]
	if leased {
		close(last.stop)
		last.done.Wait()
		_ = last.rdb.Close()
		fleet = fleet[:len(fleet)-1]
	}
	time.Sleep(d - d/2)
	for _, in := range fleet {
		close(in.stop)
		in.done.Wait()
	}
	end := time.Now()
	calls := redisproc.ScriptCalls(ctx, f.global)
	for _, in := range fleet {
		if err := in.lim.Close(); err != nil {
			return nil, 0, 0, 0, err
		}
		_ = in.rdb.Close()
	}
	// Units allowed since the run began, and what Redis consumed: the
	// bucket, always nearly empty under this demand, has what it did not.
	elapsed := end.Sub(r.start)
	allowed := int64(global.Burst) + int64(elapsed.Seconds()*float64(c.limit))
	peekRDB := f.client()
	defer peekRDB.Close()
	store, err := redisstore.New(peekRDB)
	if err != nil {
		return nil, 0, 0, 0, err
	}
	peek, err := limiter.New(store, rules[1:], prefix)
	if err != nil {
		return nil, 0, 0, 0, err
	}
	st, err := peek.Status(ctx, "global", "all")
	if err != nil {
		return nil, 0, 0, 0, err
	}
	consumed := int64(global.Burst) + int64(time.Since(r.start).Seconds()*float64(c.limit)) - int64(st.Results[0].Remaining)
	return r, calls, allowed, consumed, nil
}

// counted counts the store calls that carry the global rule's key, for
// the topologies where the global key's node decides the per-key rules
// too.
type counted struct {
	store.Store
	n *atomic.Int64
}

func (c counted) Decide(ctx context.Context, now time.Time, checks []store.Check, results []store.Result) (store.Verdict, error) {
	for _, ch := range checks {
		if strings.Contains(ch.Key.String(), globalKey) {
			c.n.Add(1)
			break
		}
	}
	return c.Store.Decide(ctx, now, checks, results)
}

// dispatch releases perSecond requests a second into work, each
// millisecond what is due; requests that find work full are not made.
func dispatch(perSecond float64, work chan<- struct{}, stop <-chan struct{}) {
	t := time.NewTicker(time.Millisecond)
	defer t.Stop()
	start, sent := time.Now(), 0.0
	for {
		select {
		case <-stop:
			return
		case now := <-t.C:
			due := now.Sub(start).Seconds() * perSecond
			for ; sent+1 <= due; sent++ {
				select {
				case work <- struct{}{}:
				default:
				}
			}
		}
	}
}

// killed prints the fleet's admissions per 100 ms around the kill.
func killed(c config, r *run) {
	n := len(r.slots)
	kill := int(c.d/2) / int(100*time.Millisecond)
	var parts []string
	for s := max(0, kill-3); s < min(n-1, kill+int(c.lease/(100*time.Millisecond))+4); s++ {
		mark := ""
		if s == kill {
			mark = "|kill| "
		}
		parts = append(parts, fmt.Sprintf("%s%.0f%%", mark, 100*float64(r.slots[s].Load())/(float64(c.limit)/10)))
	}
	fmt.Printf("  admitted per 100 ms around the kill, as a share of the limit: %v\n", parts)
}
