package parse

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/seed-bff0c9e1/ratelimit/keyfunc"
)

// String is the file as read, one line per setting, rule and stack (what
// config.Check prints).
func (f *File) String() string {
	var b strings.Builder
	prefix := f.Prefix
	if prefix == "" {
		prefix = "ratelimit (the default)"
	}
	fmt.Fprintf(&b, "key prefix %s; client IP %s; fail %s%s\n", prefix, ipString(f.ClientIP), f.Failure, exemptString(f.Exempt))
	for _, r := range f.Rules {
		fmt.Fprintf(&b, "rule %s: %v by %v", r.Name, r.Algorithm, r.Key)
		if r.AltKey != nil {
			fmt.Fprintf(&b, ", else by %v", r.AltKey)
		}
		if r.Optional {
			b.WriteString(", optional")
		}
		if r.Plans != nil {
			fmt.Fprintf(&b, "; plans by %s %s:", r.Plans.By.Kind, r.Plans.By.Arg)
			for _, name := range slices.Sorted(maps.Keys(r.Plans.Values)) {
				fmt.Fprintf(&b, " %s=%v", name, r.Plans.Values[name])
			}
		}
		if r.Lease > 0 {
			fmt.Fprintf(&b, "; leased for %v", r.Lease)
		}
		if r.Penalty > 0 {
			fmt.Fprintf(&b, "; penalty %v", r.Penalty)
		}
		if r.Blockable {
			b.WriteString("; blockable")
		}
		if r.Shadow {
			b.WriteString("; shadow (decided and counted, never refuses)")
		}
		b.WriteString("\n")
	}
	for _, s := range f.Stacks {
		fmt.Fprintf(&b, "stack %s: %s", s.Name, strings.Join(s.Rules, ", "))
		if len(s.Match) > 0 {
			fmt.Fprintf(&b, "; matches %s", strings.Join(s.Match, ", "))
		}
		if len(s.Methods) > 0 {
			fmt.Fprintf(&b, "; gRPC calls %s", strings.Join(s.Methods, ", "))
		}
		if s.Domain != "" {
			fmt.Fprintf(&b, "; Envoy domain %s", s.Domain)
		}
		if s.Failure != "" {
			fmt.Fprintf(&b, "; fail %s", s.Failure)
		}
		if s.Exempt != nil {
			b.WriteString(exemptString(s.Exempt))
		}
		b.WriteString("\n")
	}
	return b.String()
}

func ipString(c keyfunc.IPConfig) string {
	v4, v6 := c.IPv4PrefixLen, c.IPv6PrefixLen
	if v4 == 0 {
		v4 = 32
	}
	if v6 == 0 {
		v6 = 64
	}
	proxies := "none trusted: the TCP peer"
	if len(c.TrustedProxies) > 0 {
		proxies = "behind " + strings.Join(c.TrustedProxies, ", ")
		if c.Header != "" {
			proxies += ", reading " + c.Header + " only"
		}
	}
	return fmt.Sprintf("(%s; IPv4 /%d, IPv6 /%d)", proxies, v4, v6)
}

func exemptString(nets []string) string {
	if len(nets) == 0 {
		return "; no exemptions"
	}
	return "; exempt " + strings.Join(nets, ", ")
}
