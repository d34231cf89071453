package main

import (
	"context"
	"os"
	"time"

	"github.com/seed-bff0c9e1/ratelimit/benchmarks/internal/procstat"
)

// cost is what a decision cost, averaged over a phase: Redis's CPU (INFO
// cpu), the commands the server sent and their time (INFO
// commandstats), the server process's CPU (/proc/PID/stat), and this
// process's, the load generator's, which shares the machine with them.
type cost struct {
	redisCPU, redisCommandTime, serverCPU, clientCPU time.Duration
	redisCommands                                    float64
	perCommand                                       map[string]float64 // every command's calls a decision, those scripts ran too
}

// measured runs phase with Redis's statistics reset, and sets its cost
// per decision from the counters' change over it.
func measured(ctx context.Context, s *server, r *redisServer, phase func() load) (load, error) {
	if err := r.rdb.ConfigResetStat(ctx).Err(); err != nil {
		return load{}, err
	}
	redis0, err := r.counters(ctx)
	if err != nil {
		return load{}, err
	}
	server0, err := procstat.CPU(s.cmd.Process.Pid)
	if err != nil {
		return load{}, err
	}
	client0, err := procstat.CPU(os.Getpid())
	if err != nil {
		return load{}, err
	}
	l := phase()
	client1, err := procstat.CPU(os.Getpid())
	if err != nil {
		return load{}, err
	}
	server1, err := procstat.CPU(s.cmd.Process.Pid)
	if err != nil {
		return load{}, err
	}
	redis1, err := r.counters(ctx)
	if err != nil {
		return load{}, err
	}
	if n := time.Duration(l.decided); n > 0 {
		sent := redis1.sent()
		l.cost = cost{redisCPU: (redis1.cpu - redis0.cpu) / n, redisCommandTime: sent.time / n,
			serverCPU: (server1 - server0) / n, clientCPU: (client1 - client0) / n, redisCommands: float64(sent.calls) / float64(n), perCommand: map[string]float64{}}
		for name, st := range redis1.commands {
			l.cost.perCommand[name] = float64(st.calls) / float64(n)
		}
	}
	return l, nil
}
