package compile

import (
	"fmt"
	"strings"

	"github.com/seed-bff0c9e1/ratelimit"
	"github.com/seed-bff0c9e1/ratelimit/config/internal/parse"
	"github.com/seed-bff0c9e1/ratelimit/guard"
	"github.com/seed-bff0c9e1/ratelimit/keyfunc"
)

// Call is a gRPC call as a file's identities read it: config.Call, which
// documents it for the program.
type Call interface {
	keyfunc.Source
	Method() string
	Metadata(key string) []string
}

// Calls are the guards of one version's gRPC stacks (those with methods),
// on calls of type C.
type Calls[C Call] struct {
	exact    map[string]*guard.Guard[C] // by full method
	services map[string]*guard.Guard[C] // by "/pkg.Service/"
}

// NewCalls makes the guards of v's gRPC stacks, on v's limiter, each
// configured by cfg with the stack's failure policy applied.
func NewCalls[C Call](v *Version, cfg guard.Config[C]) (*Calls[C], error) {
	f := v.File
	ip, err := keyfunc.ClientIPOf[C](f.ClientIP)
	if err != nil {
		return nil, err
	}
	keys := callKeys[C]{ip: ip}
	s := &Calls[C]{exact: map[string]*guard.Guard[C]{}, services: map[string]*guard.Guard[C]{}}
	for _, st := range f.Stacks {
		if st.Door() != parse.GRPCDoor {
			continue
		}
		cfg := cfg
		cfg.FailClosed = cfg.FailClosed || f.FailsClosed(st)
		gd, err := guard.New(v.Lim, rulesOf(f, st.Rules, keys), cfg)
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

// Guard is the guard of the stack whose methods name method (a full
// method before a service's pattern); nil when no gRPC stack does.
func (s *Calls[C]) Guard(method string) *guard.Guard[C] {
	if g := s.exact[method]; g != nil {
		return g
	}
	if i := strings.LastIndexByte(method, '/'); i > 0 {
		return s.services[method[:i+1]]
	}
	return nil
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
