package rls_test

import (
	"slices"
	"testing"

	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"

	"github.com/seed-bff0c9e1/ratelimit/rls"
)

// refused is the rule names res's dynamic_metadata lists as refusing; nil
// when it has no metadata. Any other field fails the test.
func refused(t *testing.T, res *rlsv3.RateLimitResponse) []string {
	t.Helper()
	m := res.GetDynamicMetadata()
	if m == nil {
		return nil
	}
	if len(m.Fields) != 1 || m.Fields[rls.RefusedKey] == nil {
		t.Fatalf("dynamic_metadata %v, want only %s", m, rls.RefusedKey)
	}
	return listed(res, rls.RefusedKey)
}

func TestDynamicMetadata(t *testing.T) {
	c, err := rls.Parse("test.yaml", []byte(serverConfig))
	if err != nil {
		t.Fatal(err)
	}
	rules := rls.Limits(c) // in file order: per-ip, tenant, api, beta
	ip, api, beta := rules[0].Name, rules[2].Name, rules[3].Name
	eachBackend(t, func(t *testing.T, b backend) {
		s := serve(t, b, serverConfig, rls.Options{})
		if got := refused(t, ask(t, s, hits(desc("remote_address", "a"), 3), desc("beta", "u"))); got != nil {
			t.Errorf("admitted: metadata lists %v, want none", got)
		}
		// The shadow rule would refuse too: it is not listed.
		res := ask(t, s, desc("beta", "u"), desc("remote_address", "a"), hits(desc("tenant", "t", "path", "/api/x"), 3), desc("tenant", "t"))
		same(t, "refused", summary(res), []any{over, over, uint32(0), over, uint32(0), over, uint32(0), ok, uint32(100)})
		if got := refused(t, res); !slices.Equal(got, []string{ip, api}) {
			t.Errorf("refused by %v, want %v", got, []string{ip, api})
		}
		// Two descriptors of one rule that refuse: the rule once.
		res = ask(t, s, desc("remote_address", "a"), desc("remote_address", "b"), hits(desc("remote_address", "c"), 9))
		if got := refused(t, res); !slices.Equal(got, []string{ip}) {
			t.Errorf("one rule refusing twice: %v, want [%s]", got, ip)
		}
		if got := refused(t, ask(t, s, desc("beta", "u"))); got != nil {
			t.Errorf("a shadow rule's would-be refusal: metadata lists %v, want none (the rule is %s)", got, beta)
		}
		shadow := serve(t, b, serverConfig, rls.Options{ShadowMode: true})
		if got := refused(t, ask(t, shadow, desc("remote_address", "a"))); got != nil {
			t.Errorf("global shadow mode: metadata lists %v, want none", got)
		}
	})
}
