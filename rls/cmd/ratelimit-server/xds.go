package main

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	statuspb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"github.com/seed-bff0c9e1/ratelimit/rls"
)

// applyFunc puts a version of the configuration in force, or says why
// not: err is why the version's resources are not a configuration.
type applyFunc func(version string, configs []*rls.Config, err error) error

// xdsClient takes the configuration from an xDS server, as the reference
// server's CONFIG_TYPE=GRPC_XDS_SOTW does: one state-of-the-world stream
// of the aggregated discovery service, subscribed to every
// RateLimitConfig resource for its node. Each response is a whole
// version: applied, it is ACKed; rejected (a resource that does not
// parse, two of one domain), it is NACKed with the reason, and the
// version in force stays. When the stream fails it connects again after
// a wait that doubles with each failure, from xs.retry to xs.maxRetry.
type xdsClient struct {
	xs      xdsSettings
	conn    *grpc.ClientConn
	apply   applyFunc
	log     *slog.Logger
	applied string // the version in force; "" before the first
}

// newXDSClient makes a client of the server xs names; it connects once
// run.
func newXDSClient(xs xdsSettings, apply applyFunc, log *slog.Logger) (*xdsClient, error) {
	creds := insecure.NewCredentials()
	if xs.tls != nil {
		creds = credentials.NewTLS(xs.tls)
	}
	opts := []grpc.DialOption{grpc.WithTransportCredentials(creds)}
	if xs.maxMsgSize > 0 {
		opts = append(opts, grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(xs.maxMsgSize)))
	}
	conn, err := grpc.NewClient(xs.serverURL, opts...)
	if err != nil {
		return nil, fmt.Errorf("ratelimit: CONFIG_GRPC_XDS_SERVER_URL %q: %w", xs.serverURL, err)
	}
	return &xdsClient{xs: xs, conn: conn, apply: apply, log: log}, nil
}

// run keeps a stream open until ctx is done, then closes the connection.
func (c *xdsClient) run(ctx context.Context) {
	defer c.conn.Close()
	wait := c.xs.retry
	for {
		got, err := c.stream(ctx)
		if ctx.Err() != nil {
			return
		}
		if got {
			wait = c.xs.retry // the server answered: a new failure starts over
		}
		d := jitter(wait)
		c.log.Warn("ratelimit: the xDS stream failed; connecting again", "server", c.xs.serverURL, "in", d, "error", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(d):
		}
		wait = min(2*wait, c.xs.maxRetry)
	}
}

// jitter is d give or take up to a half, so that servers that lost one
// xDS server do not all call it again at once.
func jitter(d time.Duration) time.Duration {
	return d/2 + rand.N(d+1)
}

// stream subscribes and answers each response until the stream fails;
// got is whether a response arrived.
func (c *xdsClient) stream(ctx context.Context) (got bool, err error) {
	ctx, cancel := context.WithCancel(metadata.NewOutgoingContext(ctx, c.xs.headers))
	defer cancel()
	st, err := discoveryv3.NewAggregatedDiscoveryServiceClient(c.conn).StreamAggregatedResources(ctx)
	if err != nil {
		return false, err
	}
	// The version in force, so that a server that has nothing newer
	// waits for a change rather than sending it again.
	req := &discoveryv3.DiscoveryRequest{Node: c.xs.node, TypeUrl: rateLimitConfigType, VersionInfo: c.applied}
	for {
		if err := st.Send(req); err != nil {
			return got, err
		}
		res, err := st.Recv()
		if err != nil {
			return got, err
		}
		got = true
		req = c.answer(res)
	}
}

// answer applies res and returns its ACK, or its NACK with the reason.
func (c *xdsClient) answer(res *discoveryv3.DiscoveryResponse) *discoveryv3.DiscoveryRequest {
	var err error
	if res.GetTypeUrl() != rateLimitConfigType {
		err = c.apply(res.GetVersionInfo(), nil, fmt.Errorf("ratelimit: xDS: a response of type %q; subscribed to %s only", res.GetTypeUrl(), rateLimitConfigType))
	} else {
		configs, bad := xdsConfigs(res.GetResources())
		err = c.apply(res.GetVersionInfo(), configs, bad)
	}
	req := &discoveryv3.DiscoveryRequest{Node: c.xs.node, TypeUrl: rateLimitConfigType, ResponseNonce: res.GetNonce()}
	if err != nil {
		c.log.Debug("ratelimit: xDS version rejected", "version", res.GetVersionInfo(), "in_force", c.applied)
		req.VersionInfo = c.applied
		req.ErrorDetail = &statuspb.Status{Code: int32(codes.InvalidArgument), Message: err.Error()}
		return req
	}
	c.applied = res.GetVersionInfo()
	req.VersionInfo = c.applied
	c.log.Debug("ratelimit: xDS version applied", "version", c.applied)
	return req
}

// startXDS starts taking the configuration from the xDS server xs names
// and returns the service once a first version is in force, as the
// reference server waits for its first configuration before serving;
// build makes the service of that version. Until then a version that is
// rejected is logged and NACKed. With xs.forceStart the service is built
// on no configuration, answering every call OK, and returned at once. The client runs until stop, which waits
// for it; call stop before closing the service. A nil service with a nil
// error means ctx was done first.
func startXDS(ctx context.Context, xs xdsSettings, build func([]*rls.Config) (*service, error), log *slog.Logger) (svc *service, stop func(), err error) {
	first := make(chan *service, 1)
	var in *service // the service once built; only the client's goroutine uses it
	apply := func(version string, configs []*rls.Config, err error) error {
		if in != nil {
			return in.update(configs, err, version)
		}
		if err == nil {
			in, err = build(configs)
		}
		if err != nil {
			log.Error("ratelimit: the xDS server's version was rejected; waiting for a valid one", "xds_version", version, "error", err)
			return err
		}
		log.Info("ratelimit: the first configuration arrived from the xDS server", "xds_version", version, "domains", len(configs))
		first <- in
		return nil
	}
	c, err := newXDSClient(xs, apply, log)
	if err != nil {
		return nil, nil, err
	}
	if xs.forceStart {
		if in, err = build(nil); err != nil {
			_ = c.conn.Close()
			return nil, nil, err
		}
		first <- in
	}
	running, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); c.run(running) }()
	stop = func() { cancel(); <-done }
	if !xs.forceStart {
		log.Info("ratelimit: waiting for the first configuration from the xDS server", "server", xs.serverURL, "node", xs.node.GetId())
	}
	select {
	case svc = <-first:
		return svc, stop, nil
	case <-ctx.Done():
		stop()
		select {
		case svc = <-first: // built as ctx ended: close it, it will not serve
			if err := svc.close(); err != nil {
				log.Warn(err.Error())
			}
		default:
		}
		return nil, nil, nil
	}
}
