package grpclimit

import (
	"context"

	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
)

// Call is a gRPC call as rules read it: its context, full method, peer and
// incoming metadata, and, for a message cost (WithMessageCost), the
// message a stream received. A Rule's Identity, AltIdentity, Plan, Cost, Skip and
// Settle take it.
//
// It reads the context's metadata and peer when a rule asks, not before:
// a copy of all the metadata would cost a call more than its decision.
type Call struct {
	ctx     context.Context
	method  string
	message any
}

// newCall is the call of method on ctx.
func newCall(ctx context.Context, method string) *Call {
	return &Call{ctx: ctx, method: method}
}

// Context is the call's context.
func (c *Call) Context() context.Context { return c.ctx }

// Method is the call's full method, "/pkg.Service/Method".
func (c *Call) Method() string { return c.method }

// Metadata returns the values of the incoming metadata key (any case); a
// binary key's ("-bin") are their decoded bytes.
func (c *Call) Metadata(key string) []string {
	return metadata.ValueFromIncomingContext(c.ctx, key)
}

// Message is the message a stream received, for WithMessageCost's
// function; nil when the call itself is decided.
func (c *Call) Message() any { return c.message }

// Peer is the call's TCP peer, "host:port" ("" when unknown): with
// Forwarded, it makes a Call a keyfunc.Source.
func (c *Call) Peer() string {
	if p, ok := peer.FromContext(c.ctx); ok && p.Addr != nil {
		return p.Addr.String()
	}
	return ""
}

// Forwarded are the forwarding metadata a gateway sets (forwarded,
// x-forwarded-for, x-real-ip), read by ClientIP only from trusted peers
// (and only IPConfig.Header's when it names one).
func (c *Call) Forwarded() (forwarded, xForwardedFor, xRealIP []string) {
	return c.Metadata("forwarded"), c.Metadata("x-forwarded-for"), c.Metadata("x-real-ip")
}
