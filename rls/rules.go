package rls

import (
	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"

	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/config/envoy"
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
	// plan its values choose (nil: the limit's rule's algorithm). A
	// descriptor with a limit override that matches no limit, or an
	// unlimited one, gets the domain's override limit, if it has one
	// (see envoy.Config.Override). An error refuses the request as
	// invalid; it names no value.
	limitOf(d *ratelimitv3.RateLimitDescriptor) (l *envoy.Limit, identity string, plan algorithms.Algorithm, err error)
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
		return configDomain{cf}
	}
	return nil
}

// configDomain is a domain of the reference format.
type configDomain struct{ c *Config }

// limitOf is the limit d reaches in c (see Config.Match), counted by the
// identity of all of d's values, those that reached a wildcard with
// share_threshold as that wildcard. Under a limit override, as the
// reference limits it, each value counts apart (share_threshold aside),
// and when the limit reached is none, an unlimited one, one that never
// refuses (shadow_mode, quota_mode) or one of 0 (which the limiter has no
// rule of), the override is enforced on c's
// override limit (Config.Override), counted by d's keys and values.
func (c configDomain) limitOf(d *ratelimitv3.RateLimitDescriptor) (*envoy.Limit, string, algorithms.Algorithm, error) {
	l, shared := c.c.Match(entries(d))
	keyed := false
	if d.GetLimit() != nil {
		shared = 0
		if l == nil || l.Unlimited || l.Shadow || l.Quota || l.PerUnit == 0 {
			l, keyed = c.c.Override(), true
		}
	}
	if l == nil || l.Unlimited {
		return l, "", nil, nil
	}
	return l, identity(d, keyed, shared), nil, nil
}
