// Package redisproc starts the redis-server processes the benchmark
// commands measure against (one server, or a cluster of Masters on free
// loopback ports) and reads their INFO counters.
package redisproc

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Start starts redis-server on a free 127.0.0.1 port with persistence
// off and returns its address and a stop function.
func Start() (string, func(), error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return StartPort(port)
}

// StartPort starts redis-server on 127.0.0.1:port, as Start does: a
// benchmark that kills its Redis starts it again on the same address.
func StartPort(port int) (string, func(), error) {
	cmd := exec.Command("redis-server", "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--loglevel", "warning")
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return "", nil, fmt.Errorf("redis-server (apt-get install redis-server, or set REDIS_URL): %w", err)
	}
	stop := func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if c.Ping(context.Background()).Err() == nil {
			return addr, stop, nil
		}
		if time.Now().After(deadline) {
			stop()
			return "", nil, fmt.Errorf("redis-server on %s did not start", addr)
		}
	}
}

// UsedMemory is INFO memory's used_memory.
func UsedMemory(ctx context.Context, rdb *redis.Client) (int64, error) {
	info, err := rdb.Info(ctx, "memory").Result()
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, "used_memory:"); ok {
			return strconv.ParseInt(v, 10, 64)
		}
	}
	return 0, fmt.Errorf("no used_memory in INFO memory")
}

// ScriptUsec is the Redis CPU in scripts and functions since the last
// CONFIG RESETSTAT: the usec of EVALSHA, EVAL and FCALL (INFO
// commandstats), 0 when none ran. Per decision, it counts the decisions a
// batched call carries too.
func ScriptUsec(ctx context.Context, rdb *redis.Client) float64 {
	return CommandStat(ctx, rdb, "usec")
}

// CommandStat sums one field (calls, usec) of INFO commandstats over
// EVALSHA, EVAL and FCALL, since the last CONFIG RESETSTAT; 0 when none
// ran or INFO failed.
func CommandStat(ctx context.Context, rdb *redis.Client, field string) float64 {
	info, err := rdb.Info(ctx, "commandstats").Result()
	if err != nil {
		return 0
	}
	var sum float64
	for _, line := range strings.Split(info, "\r\n") {
		name, fields, ok := strings.Cut(line, ":")
		if !ok || (name != "cmdstat_evalsha" && name != "cmdstat_eval" && name != "cmdstat_fcall") {
			continue
		}
		for _, f := range strings.Split(fields, ",") {
			k, v, _ := strings.Cut(f, "=")
			if k == field {
				n, _ := strconv.ParseFloat(v, 64)
				sum += n
			}
		}
	}
	return sum
}

// Masters returns a client per master, in a stable order (by address).
func Masters(ctx context.Context, cc *redis.ClusterClient) []*redis.Client {
	var addrs []string
	byAddr := map[string]*redis.Client{}
	var mu sync.Mutex // ForEachMaster calls concurrently
	_ = cc.ForEachMaster(ctx, func(_ context.Context, n *redis.Client) error {
		mu.Lock()
		defer mu.Unlock()
		addrs = append(addrs, n.Options().Addr)
		byAddr[n.Options().Addr] = n
		return nil
	})
	slices.Sort(addrs)
	out := make([]*redis.Client, len(addrs))
	for i, a := range addrs {
		out[i] = byAddr[a]
	}
	return out
}

// ScriptCalls is the number of EVALSHA, EVAL and FCALL calls since the
// last CONFIG RESETSTAT (INFO commandstats).
func ScriptCalls(ctx context.Context, rdb *redis.Client) float64 {
	return CommandStat(ctx, rdb, "calls")
}

// StartCluster starts n masters in cluster mode and returns a cluster
// client over them (a pool of poolSize connections per node), once every
// node reports all slots ok.
func StartCluster(n, poolSize int) (*redis.ClusterClient, func(), error) {
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		return nil, nil, fmt.Errorf("redis-cli: %w", err)
	}
	dir, err := os.MkdirTemp("", "ratebench-cluster")
	if err != nil {
		return nil, nil, err
	}
	var procs []*exec.Cmd
	stop := func() {
		for _, p := range procs {
			_ = p.Process.Kill()
			_ = p.Wait()
		}
		os.RemoveAll(dir)
	}
	var addrs []string
	for range n {
		port, err := freeClusterPort()
		if err != nil {
			stop()
			return nil, nil, err
		}
		cmd := exec.Command("redis-server", "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
			"--loglevel", "warning", "--cluster-enabled", "yes", "--cluster-config-file", filepath.Join(dir, "nodes-"+strconv.Itoa(port)+".conf"), "--dir", dir)
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			stop()
			return nil, nil, fmt.Errorf("redis-server: %w", err)
		}
		procs = append(procs, cmd)
		addrs = append(addrs, net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	}
	for _, a := range addrs {
		if err := waitPing(a); err != nil {
			stop()
			return nil, nil, err
		}
	}
	args := append([]string{"--cluster", "create"}, addrs...)
	if out, err := exec.Command(cli, append(args, "--cluster-yes")...).CombinedOutput(); err != nil {
		stop()
		return nil, nil, fmt.Errorf("redis-cli --cluster create: %v: %s", err, out)
	}
	for _, a := range addrs {
		if err := waitClusterOK(a); err != nil {
			stop()
			return nil, nil, err
		}
	}
	return redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, PoolSize: poolSize}), stop, nil
}

// freeClusterPort is a free loopback port whose cluster bus port (+10000)
// is free too.
func freeClusterPort() (int, error) {
	for range 50 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, err
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if port+10000 > 65535 {
			continue
		}
		if bus, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port+10000)); err == nil {
			bus.Close()
			return port, nil
		}
	}
	return 0, fmt.Errorf("no free port pair for a cluster node")
}

func waitPing(addr string) error {
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if c.Ping(context.Background()).Err() == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("redis-server on %s did not start", addr)
		}
	}
}

func waitClusterOK(addr string) error {
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		info, err := c.ClusterInfo(context.Background()).Result()
		if err == nil && strings.Contains(info, "cluster_state:ok") && strings.Contains(info, "cluster_slots_ok:16384") {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("cluster not ok on %s: %v", addr, err)
		}
	}
}
