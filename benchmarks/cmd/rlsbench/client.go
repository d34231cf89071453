package main

import (
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// client is several gRPC connections to one server; caller i uses
// connection i modulo their number, as Envoy's workers each hold one.
type client struct {
	conns []*grpc.ClientConn
	stubs []rlsv3.RateLimitServiceClient
}

// dial opens n connections to addr.
func dial(addr string, n int) (*client, error) {
	c := &client{}
	for range max(n, 1) {
		conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			c.close()
			return nil, err
		}
		c.conns = append(c.conns, conn)
		c.stubs = append(c.stubs, rlsv3.NewRateLimitServiceClient(conn))
	}
	return c, nil
}

// stub is caller i's connection.
func (c *client) stub(i int) rlsv3.RateLimitServiceClient { return c.stubs[i%len(c.stubs)] }

// close closes every connection.
func (c *client) close() {
	for _, conn := range c.conns {
		_ = conn.Close()
	}
}
