package middleware

import (
	"fmt"
	"net/http"
	"net/netip"

	"github.com/seed-bff0c9e1/ratelimit"
	"github.com/seed-bff0c9e1/ratelimit/internal/netx"
	"github.com/seed-bff0c9e1/ratelimit/keyfunc"
)

// ExemptIPs returns an exemption (for WithExempt) for clients whose address,
// as res resolves it, lies in one of cidrs.
func ExemptIPs(res *keyfunc.IPResolver, cidrs ...string) (func(*http.Request) bool, error) {
	var in []netip.Prefix
	for _, s := range cidrs {
		p, err := netx.ParsePrefix(s)
		if err != nil {
			return nil, fmt.Errorf("%w: exempt CIDR: %w", ratelimit.ErrConfig, err)
		}
		in = append(in, p)
	}
	return func(r *http.Request) bool {
		a, err := res.ClientAddr(r)
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
