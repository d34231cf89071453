package middleware

import (
	"fmt"
	"net/http"
	"net/netip"

	"github.com/seed-bff0c9e1/ratelimit"
	"github.com/seed-bff0c9e1/ratelimit/internal/clientip"
	"github.com/seed-bff0c9e1/ratelimit/internal/netx"
	"github.com/seed-bff0c9e1/ratelimit/keyfunc"
)

// ExemptIPs returns an exemption (for WithExempt) for clients whose address,
// resolved as keyfunc.ClientIP resolves it with cfg (the prefix lengths
// aside), lies in one of cidrs.
//
// Trust model: the exemption is only as safe as that address. Behind
// proxies, name the forwarding field they set in cfg.Header; left empty,
// a client that sends a field the proxies pass through unchanged (an
// X-Forwarded-For behind nginx setting X-Real-IP) can claim an exempt
// address, unless the proxies strip it.
func ExemptIPs(cfg keyfunc.IPConfig, cidrs ...string) (func(*http.Request) bool, error) {
	res, err := clientip.New(cfg.TrustedProxies, cfg.Header, cfg.IPv4PrefixLen, cfg.IPv6PrefixLen)
	if err != nil {
		return nil, err
	}
	var in []netip.Prefix
	for _, s := range cidrs {
		p, err := netx.ParsePrefix(s)
		if err != nil {
			return nil, fmt.Errorf("%w: exempt CIDR: %w", ratelimit.ErrConfig, err)
		}
		in = append(in, p)
	}
	return func(r *http.Request) bool {
		a, err := res.Addr((*clientip.HTTP)(r))
		if err != nil {
			return false
		}
		for _, p := range in {
			if p.Contains(a) {
				return true
			}
		}
		return false
	}, nil
}
