package rls

import (
	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
)

// rules are what a Server decides one request on, in either format: a
// limiter, and each domain's limits on it. The reference format's are
// fixed for a Server's life (configRules); the library's rules file's are
// those of the version in force when the request arrives (fileRules).
type rules interface {
	limiter() *limiter.Limiter
	// domain is the limits of the domain named name; nil: none.
	domain(name string) domain
}

// domain is one domain's limits, as the plan builder asks them.
type domain interface {
	// limitOf is the limit descriptor d matches (nil: none; an unlimited
	// limit is not decided), the identity its check counts d by and the
	// plan its values choose (nil: the limit's rule's algorithm). An error
	// refuses the request as invalid; it names no value.
	limitOf(d *ratelimitv3.RateLimitDescriptor) (l *limit, identity string, plan algorithms.Algorithm, err error)
}

// configRules are the reference format's rules: configs by domain, on
// the limiter built on their rules.
type configRules struct {
	lim      *limiter.Limiter
	byDomain map[string]*Config
}

func (c *configRules) limiter() *limiter.Limiter { return c.lim }

func (c *configRules) domain(name string) domain {
	if cf := c.byDomain[name]; cf != nil {
		return cf
	}
	return nil
}

// limitOf is the limit d reaches in c (see match), counted by the
// identity of all of d's values.
func (c *Config) limitOf(d *ratelimitv3.RateLimitDescriptor) (*limit, string, algorithms.Algorithm, error) {
	l := c.match(d)
	if l == nil || l.unlimited {
		return l, "", nil, nil
	}
	return l, identity(d), nil, nil
}
