package config

import (
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/seed-bff0c9e1/ratelimit/config/internal/compile"
	"github.com/seed-bff0c9e1/ratelimit/guard"
	"github.com/seed-bff0c9e1/ratelimit/keyfunc"
)

// Call is a gRPC call as a file's identities read it (grpclimit.Call is
// one): its peer and forwarding metadata (ip), its full method (method,
// and the stacks' methods) and its metadata (metadata, and plans chosen by
// metadata).
type Call interface {
	keyfunc.Source
	Method() string
	Metadata(key string) []string
}

// Calls are the gRPC stacks of a file (those with methods), served on
// calls of type C: each call is decided by the stack whose methods name
// it (a full method before a service's pattern), on the rules in force
// when it arrives, through reloads. They share the file's limiter with
// its HTTP stacks, so a rule in an HTTP and a gRPC stack keeps one count.
// Package grpclimit serves them (grpclimit.FromFile). They are safe for
// concurrent use.
type Calls[C Call] struct {
	l   *Limits
	cfg guard.Config[C]
	mu  sync.Mutex                    // serializes rebuilds
	cur atomic.Pointer[callStacks[C]] // of the version in force when last asked
}

// callStacks are the guards of one version's gRPC stacks.
type callStacks[C Call] struct {
	gen    *generation
	guards *compile.Calls[C]
}

// ServeCalls returns the gRPC stacks of l on calls of type C, each
// stack's guard configured by cfg, the stack's failure policy applied.
// A file whose stacks cannot be built is an error wrapping
// ratelimit.ErrConfig.
func ServeCalls[C Call](l *Limits, cfg guard.Config[C]) (*Calls[C], error) {
	c := &Calls[C]{l: l, cfg: cfg}
	g := l.cur.Load()
	s, err := c.build(g)
	if err != nil {
		return nil, err
	}
	c.cur.Store(s)
	return c, nil
}

// Guard is the guard of the stack whose methods name method, for the
// rules in force; nil when no gRPC stack does.
func (c *Calls[C]) Guard(method string) *guard.Guard[C] {
	return c.stacks().guards.Guard(method)
}

// stacks are the guards of the generation in force, built the first time
// it is asked for; a generation that cannot be built (it was checked when
// loaded, so it can) keeps the previous guards, and is logged once.
func (c *Calls[C]) stacks() *callStacks[C] {
	g := c.l.cur.Load()
	if s := c.cur.Load(); s.gen == g {
		return s // a call takes no lock once its generation is built
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if s := c.cur.Load(); s.gen == g {
		return s
	}
	s, err := c.build(g)
	if err != nil {
		slog.Error("ratelimit: gRPC stacks not rebuilt; the previous stay in force", "file", c.l.path, "err", err)
		kept := *c.cur.Load() // for this generation: logged once, not rebuilt per call
		kept.gen = g
		s = &kept
	}
	c.cur.Store(s)
	return s
}

// build makes the guards of g's gRPC stacks.
func (c *Calls[C]) build(g *generation) (*callStacks[C], error) {
	guards, err := compile.NewCalls(g.Version, c.cfg)
	if err != nil {
		return nil, err
	}
	return &callStacks[C]{gen: g, guards: guards}, nil
}
