package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"time"
)

// benchServer starts one server and runs every phase on it, the outage
// last (it ends with the server's SIGTERM).
func benchServer(ctx context.Context, s settings, name, bin, dir string, r *redisServer, tr *traffic) (result, error) {
	fmt.Printf("rlsbench: %s\n", name)
	srv, err := startServer(ctx, name, bin, dir, filepath.Join(dir, "runtime"), r.addr)
	if err != nil {
		return result{}, err
	}
	defer srv.kill()
	c, err := dial(srv.grpcAddr, s.conns)
	if err != nil {
		return result{}, err
	}
	defer c.close()
	res := result{name: name}
	// Each phase starts once the server answers again: the one before
	// may have left it refusing (a breaker open after timeouts).
	phase := func(run func() error) error {
		if err := srv.waitReady(ctx); err != nil {
			return err
		}
		return run()
	}
	loadPhase := func(into *load, run func() load) func() error {
		return func() (err error) {
			*into, err = measured(ctx, srv, r, run)
			return err
		}
	}
	res.closed = make([]load, len(s.callers))
	for i, n := range s.callers {
		if err := phase(loadPhase(&res.closed[i], func() load { return closedLoop(ctx, c, tr, n, s.d, s.seed) })); err != nil {
			return res, err
		}
	}
	if err := phase(loadPhase(&res.open, func() load { return openLoop(ctx, c, tr, s.rate, s.d, s.seed) })); err != nil {
		return res, err
	}
	hotValue := name + "-" + strconv.FormatInt(time.Now().UnixNano(), 36) // a fresh count
	if err := phase(func() (err error) { res.hot, err = hotKey(ctx, c, s.hotCallers, s.hotLimit, hotValue); return err }); err != nil {
		return res, err
	}
	err = phase(func() (err error) { res.outage, err = runOutage(ctx, s.outage, srv, r, c, tr, s.seed); return err })
	return res, err
}
