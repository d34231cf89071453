package main

import (
	"context"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seed-bff0c9e1/ratelimit/benchmarks/internal/redisproc"
)

// redisServer is the redis-server both servers count on, which the
// outage kills and starts again on its port.
type redisServer struct {
	addr string
	port int
	stop func()
	rdb  *redis.Client
}

// startRedis starts redis-server on a free loopback port.
func startRedis() (*redisServer, error) {
	addr, stop, err := redisproc.Start()
	if err != nil {
		return nil, err
	}
	_, p, _ := net.SplitHostPort(addr)
	port, _ := strconv.Atoi(p)
	return &redisServer{addr: addr, port: port, stop: stop, rdb: redis.NewClient(&redis.Options{Addr: addr})}, nil
}

// kill kills redis-server (SIGKILL: the outage is a crash).
func (r *redisServer) kill() {
	r.stop()
	r.stop = func() {}
}

// restart starts redis-server again on its port, empty, and returns
// once it answers.
func (r *redisServer) restart() error {
	_, stop, err := redisproc.StartPort(r.port)
	if err != nil {
		return err
	}
	r.stop = stop
	return nil
}

// close stops redis-server and closes the client.
func (r *redisServer) close() {
	_ = r.rdb.Close()
	r.kill()
}

// reset empties Redis and its command statistics.
func (r *redisServer) reset(ctx context.Context) error {
	if err := r.rdb.FlushAll(ctx).Err(); err != nil {
		return err
	}
	return r.rdb.ConfigResetStat(ctx).Err()
}

// redisCounters are Redis's CPU so far (INFO cpu, used_cpu_sys plus
// used_cpu_user), and each command's calls and time since the last
// CONFIG RESETSTAT (INFO commandstats), but INFO's and CONFIG's, which
// the benchmark sends itself.
type redisCounters struct {
	cpu      time.Duration
	commands map[string]commandStat // by name: get, evalsha, fcall
}

// commandStat is one command's line of INFO commandstats.
type commandStat struct {
	calls int64
	time  time.Duration
}

// scriptCommands run scripts and functions. The commands a script runs
// are counted in INFO commandstats too, and their time in the script's.
var scriptCommands = map[string]bool{"eval": true, "evalsha": true, "eval_ro": true, "evalsha_ro": true, "fcall": true, "fcall_ro": true}

// sent are the calls and time of the commands the server sent: the
// scripts' alone when it ran any (the rest ran inside them; a server
// that sends both is not told apart), else all.
func (c redisCounters) sent() commandStat {
	var all, scripts commandStat
	for name, st := range c.commands {
		all.calls, all.time = all.calls+st.calls, all.time+st.time
		if scriptCommands[name] {
			scripts.calls, scripts.time = scripts.calls+st.calls, scripts.time+st.time
		}
	}
	if scripts.calls > 0 {
		return scripts
	}
	return all
}

// counters reads Redis's counters.
func (r *redisServer) counters(ctx context.Context) (redisCounters, error) {
	info, err := r.rdb.Info(ctx, "cpu", "commandstats").Result()
	if err != nil {
		return redisCounters{}, err
	}
	c := redisCounters{commands: map[string]commandStat{}}
	for _, line := range strings.Split(info, "\r\n") {
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		if name == "used_cpu_sys" || name == "used_cpu_user" {
			v, _ := strconv.ParseFloat(value, 64)
			c.cpu += time.Duration(v * float64(time.Second))
		}
		cmd, ok := strings.CutPrefix(name, "cmdstat_")
		if !ok || strings.HasPrefix(cmd, "info") || strings.HasPrefix(cmd, "config") {
			continue
		}
		var st commandStat
		for _, f := range strings.Split(value, ",") {
			k, v, _ := strings.Cut(f, "=")
			n, _ := strconv.ParseInt(v, 10, 64)
			switch k {
			case "calls":
				st.calls = n
			case "usec":
				st.time = time.Duration(n) * time.Microsecond
			}
		}
		c.commands[cmd] = st
	}
	return c, nil
}
