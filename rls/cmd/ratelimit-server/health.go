package main

import (
	"context"
	"sync"

	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// healthName is the service name the reference reports its health under,
// beside the whole server's "".
const healthName = "ratelimit"

// healthService is the gRPC port's grpc.health.v1.Health, as the
// reference registers it: "" and "ratelimit" are SERVING while the
// server is healthy (see set) and NOT_SERVING otherwise, and for good
// once it stops; any other name is unknown (NOT_FOUND to Check).
type healthService struct {
	*health.Server
	mu      sync.Mutex
	changed chan struct{} // closed, and replaced, at each change of status
	stopped bool
}

// newHealth is the health service of a server that serves.
func newHealth() *healthService {
	h := &healthService{Server: health.NewServer(), changed: make(chan struct{})}
	h.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	h.SetServingStatus(healthName, healthpb.HealthCheckResponse_SERVING)
	return h
}

// set reports the server SERVING or NOT_SERVING, as serving says, unless
// it has stopped.
func (h *healthService) set(serving bool) {
	st := healthpb.HealthCheckResponse_NOT_SERVING
	if serving {
		st = healthpb.HealthCheckResponse_SERVING
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.stopped {
		return
	}
	h.SetServingStatus("", st)
	h.SetServingStatus(healthName, st)
	close(h.changed)
	h.changed = make(chan struct{})
}

// stop reports every service NOT_SERVING, for good.
func (h *healthService) stop() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.stopped {
		h.stopped = true
		h.Shutdown()
		close(h.changed)
	}
}

// Watch sends the service's status, then each change of it, until the
// server stops: then its last status (NOT_SERVING for a known service),
// and the stream ends. health.Server's Watch never ends, and a watcher
// would hold up the drain until its timeout.
func (h *healthService) Watch(in *healthpb.HealthCheckRequest, stream healthpb.Health_WatchServer) error {
	sent := healthpb.HealthCheckResponse_ServingStatus(-1) // none yet
	for {
		h.mu.Lock()
		changed, stopped := h.changed, h.stopped
		h.mu.Unlock()
		if st := h.status(in.GetService()); st != sent {
			if err := stream.Send(&healthpb.HealthCheckResponse{Status: st}); err != nil {
				return err
			}
			sent = st
		}
		if stopped {
			return nil
		}
		select {
		case <-stream.Context().Done():
			return stream.Context().Err()
		case <-changed:
		}
	}
}

// status is service's status, SERVICE_UNKNOWN for a name never set.
func (h *healthService) status(service string) healthpb.HealthCheckResponse_ServingStatus {
	res, err := h.Check(context.Background(), &healthpb.HealthCheckRequest{Service: service})
	if err != nil {
		return healthpb.HealthCheckResponse_SERVICE_UNKNOWN
	}
	return res.GetStatus()
}
