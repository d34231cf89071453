package config

import (
	"fmt"
	"maps"
	"net/http"
	"os"
	"slices"
	"strings"

	"github.com/seed-bff0c9e1/ratelimit"
	"github.com/seed-bff0c9e1/ratelimit/keyfunc"
)

// Check reads the rules file at path and validates it as Load does, with
// funcs the names the program registers with WithKeyFunc. It returns the
// rules and stacks as understood, one line each, for a CI pipeline or a
// reviewer; or every problem of the file (see Load).
func Check(path string, funcs ...string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ratelimit.ErrConfig, err)
	}
	registered := make(map[string]keyfunc.KeyFunc, len(funcs))
	for _, name := range funcs {
		registered[name] = func(*http.Request) (string, error) { return "", keyfunc.ErrNoKey }
	}
	f, err := read(path, data, registered)
	if err != nil {
		return "", err
	}
	return f.String(), nil
}

// String is the file as Check prints it.
func (f *file) String() string {
	var b strings.Builder
	prefix := f.prefix
	if prefix == "" {
		prefix = "ratelimit (the default)"
	}
	fmt.Fprintf(&b, "key prefix %s; client IP %s; fail %s%s\n", prefix, ipString(f.clientIP), f.failure, exemptString(f.exempt))
	for _, r := range f.rules {
		fmt.Fprintf(&b, "rule %s: %v by %v", r.name, r.algorithm, r.key)
		if r.altKey != nil {
			fmt.Fprintf(&b, ", else by %v", r.altKey)
		}
		if r.optional {
			b.WriteString(", optional")
		}
		if r.plans != nil {
			fmt.Fprintf(&b, "; plans by %s %s:", r.plans.by.kind, r.plans.by.arg)
			for _, name := range slices.Sorted(maps.Keys(r.plans.values)) {
				fmt.Fprintf(&b, " %s=%v", name, r.plans.values[name])
			}
		}
		if r.lease > 0 {
			fmt.Fprintf(&b, "; leased for %v", r.lease)
		}
		if r.penalty > 0 {
			fmt.Fprintf(&b, "; penalty %v", r.penalty)
		}
		if r.blockable {
			b.WriteString("; blockable")
		}
		if r.shadow {
			b.WriteString("; shadow (decided and counted, never refuses)")
		}
		b.WriteString("\n")
	}
	for _, s := range f.stacks {
		fmt.Fprintf(&b, "stack %s: %s", s.name, strings.Join(s.rules, ", "))
		if len(s.match) > 0 {
			fmt.Fprintf(&b, "; matches %s", strings.Join(s.match, ", "))
		}
		if len(s.methods) > 0 {
			fmt.Fprintf(&b, "; gRPC calls %s", strings.Join(s.methods, ", "))
		}
		if s.domain != "" {
			fmt.Fprintf(&b, "; Envoy domain %s", s.domain)
		}
		if s.failure != "" {
			fmt.Fprintf(&b, "; fail %s", s.failure)
		}
		if s.exempt != nil {
			b.WriteString(exemptString(s.exempt))
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
	}
	return fmt.Sprintf("(%s; IPv4 /%d, IPv6 /%d)", proxies, v4, v6)
}

func exemptString(nets []string) string {
	if len(nets) == 0 {
		return "; no exemptions"
	}
	return "; exempt " + strings.Join(nets, ", ")
}
