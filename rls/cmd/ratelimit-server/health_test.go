package main_test

import (
	"context"
	"io"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
)

// TestGRPCHealth asks the built server's gRPC port for its health, as a
// Kubernetes gRPC probe or Envoy's health checker does: "" and
// "ratelimit" are SERVING, another name is NOT_FOUND; a watcher sees
// NOT_SERVING once SIGTERM arrives, its stream then ends, and the server
// exits without waiting for the drain's bound.
func TestGRPCHealth(t *testing.T) {
	cmd, p, rest := start(t, build(t), "REDIS_URL=", "RUNTIME_ROOT=")
	conn, err := grpc.NewClient(p.grpc, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	c := healthpb.NewHealthClient(conn)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, name := range []string{"", "ratelimit"} {
		res, err := c.Check(ctx, &healthpb.HealthCheckRequest{Service: name})
		if err != nil || res.GetStatus() != healthpb.HealthCheckResponse_SERVING {
			t.Fatalf("Check(%q): %v %v, want SERVING", name, res, err)
		}
	}
	if _, err := c.Check(ctx, &healthpb.HealthCheckRequest{Service: "other"}); status.Code(err) != codes.NotFound {
		t.Fatalf("Check(\"other\"): %v, want NOT_FOUND", err)
	}
	w, err := c.Watch(ctx, &healthpb.HealthCheckRequest{Service: "ratelimit"})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := w.Recv(); err != nil || res.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("Watch: %v %v, want SERVING first", res, err)
	}
	stopped := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if res, err := w.Recv(); err != nil || res.GetStatus() != healthpb.HealthCheckResponse_NOT_SERVING {
		t.Fatalf("Watch after SIGTERM: %v %v, want NOT_SERVING", res, err)
	}
	if res, err := w.Recv(); err != io.EOF {
		t.Fatalf("Watch after NOT_SERVING: %v %v, want the stream's end", res, err)
	}
	<-rest // to the end before Wait closes the pipe
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit after SIGTERM: %v", err)
	}
	if d := time.Since(stopped); d > 3*time.Second {
		t.Errorf("the server took %v to exit with a health watcher: held up by it", d)
	}
}
