package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/reflection"
)

// listeners are the server's three ports: gRPC (GRPC_HOST, GRPC_PORT, or
// the Unix socket GRPC_UDS), HTTP (HOST, PORT) and debug (DEBUG_HOST,
// DEBUG_PORT).
type listeners struct {
	grpc, http, debug net.Listener
	tls               *tls.Config                // the gRPC port's; nil serves plain text
	age               keepalive.ServerParameters // the gRPC connections' ages (GRPC_MAX_CONNECTION_AGE)
	gs                *grpc.Server
	hs, ds            *http.Server
	serving           atomic.Bool // /healthcheck answers 200 while set
	health            *healthService
	needConfig        bool       // healthy only while the configuration has a domain (HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED)
	mu                sync.Mutex // serialises refresh, setRedis and stop; guards what follows
	stopping          bool
	redisDown         bool     // Redis does not answer (REDIS_HEALTH_CHECK_ACTIVE_CONNECTION)
	svc               *service // served
}

// listen opens the three ports, all or none.
func listen(s settings) (*listeners, error) {
	l := listeners{tls: s.grpcTLS, needConfig: s.needConfig, age: keepalive.ServerParameters{MaxConnectionAge: s.connAge, MaxConnectionAgeGrace: s.connGrace}}
	var err error
	for _, p := range []struct {
		ln   *net.Listener
		addr string
		unix bool
	}{{&l.grpc, s.grpcAddr, s.grpcUnix}, {&l.http, s.httpAddr, false}, {&l.debug, s.debugAddr, false}} {
		if p.unix {
			*p.ln, err = listenUnix(p.addr)
		} else {
			*p.ln, err = net.Listen("tcp", p.addr)
		}
		if err != nil {
			l.close()
			return nil, fmt.Errorf("ratelimit: %w", err)
		}
	}
	return &l, nil
}

// close closes the listeners opened so far.
func (l *listeners) close() {
	for _, ln := range []net.Listener{l.grpc, l.http, l.debug} {
		if ln != nil {
			_ = ln.Close()
		}
	}
}

// serve serves svc on the three ports until stop, with the gRPC health
// service (health.go) beside it; the first failure to serve is sent on
// the returned channel.
func (l *listeners) serve(svc *service) <-chan error {
	opts := []grpc.ServerOption{grpc.KeepaliveParams(l.age)}
	if l.tls != nil {
		opts = append(opts, grpc.Creds(credentials.NewTLS(l.tls)))
	}
	l.gs = grpc.NewServer(opts...)
	rlsv3.RegisterRateLimitServiceServer(l.gs, svc)
	reflection.Register(l.gs) // so that grpcurl needs no .proto files
	l.health = newHealth()
	healthpb.RegisterHealthServer(l.gs, l.health)
	l.hs = &http.Server{Handler: httpHandler(svc, &l.serving), ReadHeaderTimeout: 10 * time.Second}
	l.ds = &http.Server{Handler: debugHandler(svc), ReadHeaderTimeout: 10 * time.Second}
	l.mu.Lock()
	l.svc = svc
	l.mu.Unlock()
	svc.mu.Lock()
	svc.swapped = l.refresh // under svc.mu, which each swap holds
	svc.mu.Unlock()
	l.refresh()
	failed := make(chan error, 3)
	go func() { failed <- l.gs.Serve(l.grpc) }()
	for _, p := range []struct {
		srv *http.Server
		ln  net.Listener
	}{{l.hs, l.http}, {l.ds, l.debug}} {
		go func() {
			if err := p.srv.Serve(p.ln); !errors.Is(err, http.ErrServerClosed) {
				failed <- err
			}
		}()
	}
	return failed
}

// refresh reports the server healthy (/healthcheck, the gRPC health)
// unless it stops, Redis is down (setRedis) or, with needConfig, the
// configuration in force has no domain.
func (l *listeners) refresh() {
	l.mu.Lock()
	defer l.mu.Unlock()
	healthy := !l.stopping && !l.redisDown && (!l.needConfig || l.svc.hasDomains())
	l.serving.Store(healthy)
	l.health.set(healthy)
}

// setRedis records whether Redis answers (REDIS_HEALTH_CHECK_ACTIVE_CONNECTION),
// and reports the health it makes; call it once serving.
func (l *listeners) setRedis(up bool) {
	l.mu.Lock()
	l.redisDown = !up
	l.mu.Unlock()
	l.refresh()
}

// stop reports the server NOT_SERVING, stops accepting calls and waits
// for those in flight, for at most d in all; then it closes whatever is
// still open.
func (l *listeners) stop(d time.Duration) {
	l.mu.Lock()
	l.stopping = true
	l.serving.Store(false)
	l.health.stop()
	l.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var wg sync.WaitGroup
	wg.Go(func() {
		drained := make(chan struct{})
		go func() { l.gs.GracefulStop(); close(drained) }()
		select {
		case <-drained:
		case <-ctx.Done():
			l.gs.Stop()
		}
	})
	for _, srv := range []*http.Server{l.hs, l.ds} {
		wg.Go(func() {
			if srv.Shutdown(ctx) != nil {
				_ = srv.Close()
			}
		})
	}
	wg.Wait()
}
