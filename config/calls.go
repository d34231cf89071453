package config

import (
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/seed-bff0c9e1/ratelimit"
	"github.com/seed-bff0c9e1/ratelimit/config/internal/parse"
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
	cur atomic.Pointer[callStacks[C]] // of the generation in force when last asked
}

// callStacks are the guards of one generation's gRPC stacks.
type callStacks[C Call] struct {
	gen      *generation
	exact    map[string]*guard.Guard[C] // by full method
	services map[string]*guard.Guard[C] // by "/pkg.Service/"
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
	s := c.stacks()
	if g := s.exact[method]; g != nil {
		return g
	}
	if i := strings.LastIndexByte(method, '/'); i > 0 {
		return s.services[method[:i+1]]
	}
	return nil
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
	f := g.file
	ip, err := keyfunc.ClientIPOf[C](f.ClientIP)
	if err != nil {
		return nil, err
	}
	keys := callKeys[C]{ip: ip}
	s := &callStacks[C]{gen: g, exact: map[string]*guard.Guard[C]{}, services: map[string]*guard.Guard[C]{}}
	for _, st := range f.Stacks {
		if st.Door() != parse.GRPCDoor {
			continue
		}
		cfg := c.cfg
		cfg.FailClosed = cfg.FailClosed || f.FailsClosed(st)
		gd, err := guard.New(g.lim, rulesOf(f, st.Rules, keys), cfg)
		if err != nil {
			return nil, fmt.Errorf("%w: stack %q: %w", ratelimit.ErrConfig, st.Name, err)
		}
		for _, m := range st.Methods {
			if svc, ok := strings.CutSuffix(m, "*"); ok {
				s.services[svc] = gd
			} else {
				s.exact[m] = gd
			}
		}
	}
	return s, nil
}

// callKeys builds identities of calls.
type callKeys[C Call] struct {
	ip func(C) (string, error) // as the file's client_ip resolves it
}

func (k callKeys[C]) key(spec *parse.Key) func(C) (string, error) {
	switch spec.Kind {
	case "ip":
		return k.ip
	case "method":
		return func(c C) (string, error) { return c.Method(), nil }
	case "constant":
		id := spec.Arg
		return func(C) (string, error) { return id, nil }
	}
	name := strings.ToLower(spec.Arg) // header or metadata: a call's header is its metadata
	return func(c C) (string, error) {
		if v := c.Metadata(name); len(v) > 0 && v[0] != "" {
			return keyfunc.Hash(v[0]), nil
		}
		return "", &missing{"metadata " + name}
	}
}

// missing is the error of a call without the metadata a rule reads: it
// wraps ratelimit.ErrNoKey and names the key, never a value, which doors
// tell the client.
type missing struct{ what string }

func (e *missing) Error() string   { return ratelimit.ErrNoKey.Error() + ": " + e.what }
func (e *missing) Unwrap() error   { return ratelimit.ErrNoKey }
func (e *missing) Missing() string { return e.what }

func (k callKeys[C]) attr(spec *parse.Key) func(C) string {
	name := strings.ToLower(spec.Arg) // header or metadata: the parser allows no other on gRPC
	return func(c C) string {
		if v := c.Metadata(name); len(v) > 0 {
			return v[0]
		}
		return ""
	}
}
