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
// server serves and NOT_SERVING once it stops; any other name is
// unknown (NOT_FOUND to Check).
type healthService struct {
	*health.Server
	stopped chan struct{} // closed once stopping
	once    sync.Once
}

// newHealth is the health service of a server that serves.
func newHealth() *healthService {
	h := &healthService{Server: health.NewServer(), stopped: make(chan struct{})}
	h.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	h.SetServingStatus(healthName, healthpb.HealthCheckResponse_SERVING)
	return h
}

// stop reports every service NOT_SERVING, for good.
func (h *healthService) stop() {
	h.once.Do(func() {
		h.Shutdown()
		close(h.stopped)
	})
}

// Watch sends the service's status, then, once the server stops, its
// last status (NOT_SERVING for a known service) and ends the stream:
// health.Server's Watch never ends, and a watcher would hold up the
// drain until its timeout.
func (h *healthService) Watch(in *healthpb.HealthCheckRequest, stream healthpb.Health_WatchServer) error {
	sent := h.status(in.GetService())
	if err := stream.Send(&healthpb.HealthCheckResponse{Status: sent}); err != nil {
		return err
	}
	select {
	case <-stream.Context().Done():
		return stream.Context().Err()
	case <-h.stopped:
	}
	if last := h.status(in.GetService()); last != sent {
		return stream.Send(&healthpb.HealthCheckResponse{Status: last})
	}
	return nil
}

// status is service's status, SERVICE_UNKNOWN for a name never set.
func (h *healthService) status(service string) healthpb.HealthCheckResponse_ServingStatus {
	res, err := h.Check(context.Background(), &healthpb.HealthCheckRequest{Service: service})
	if err != nil {
		return healthpb.HealthCheckResponse_SERVICE_UNKNOWN
	}
	return res.GetStatus()
}
