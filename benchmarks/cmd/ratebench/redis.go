package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// startRedis starts redis-server on a free 127.0.0.1 port with persistence
// off and returns its address and a stop function.
func startRedis() (string, func(), error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
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

// usedMemory is INFO memory's used_memory.
func usedMemory(ctx context.Context, rdb *redis.Client) (int64, error) {
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

// scriptUsec is the Redis CPU in scripts and functions since the last
// CONFIG RESETSTAT: the usec of EVALSHA, EVAL and FCALL (INFO
// commandstats), 0 when none ran. Per decision, it counts the decisions a
// batched call carries too.
func scriptUsec(ctx context.Context, rdb *redis.Client) float64 {
	return commandstat(ctx, rdb, "usec")
}

// commandstat sums one field (calls, usec) of INFO commandstats over
// EVALSHA, EVAL and FCALL, since the last CONFIG RESETSTAT; 0 when none
// ran or INFO failed.
func commandstat(ctx context.Context, rdb *redis.Client, field string) float64 {
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
