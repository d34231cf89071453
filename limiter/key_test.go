package limiter

import (
	"strings"
	"testing"
)

func TestHostileIdentitiesGetDistinctBoundedKeys(t *testing.T) {
	r := &rule{name: "per-ip"}
	ids := []string{
		"a", "A", "1.2.3.4", "2001:db8::/64", "user@example.com",
		"{", "}", "{a}", "a}b", "}{", "a{b}c", "per-ip:a", "#", "#00",
		"line\nbreak", "nul\x00byte", "\xff\xfe", "ünïcödé", " ", "a b",
		strings.Repeat("x", 64), strings.Repeat("x", 65), strings.Repeat("y", 1<<20),
	}
	// The hashed form of an identity must not equal another identity's key.
	ids = append(ids, encodeIdentity("{a}"))
	seen := map[string]string{}
	for _, id := range ids {
		k := r.key("rl", id, "gc")
		if got, max := len(k), len("rl:{per-ip:}:gc")+maxRawIdentity; got > max {
			t.Errorf("identity of %d bytes: key of %d bytes, want at most %d", len(id), got, max)
		}
		open, close := strings.IndexByte(k, '{'), strings.IndexByte(k, '}')
		if open != 3 || strings.Count(k, "{") != 1 || strings.Count(k, "}") != 1 || !strings.HasPrefix(k[open+1:close], "per-ip:") || k[close:] != "}:gc" {
			t.Errorf("identity %q: key %q does not keep one hash tag {per-ip:...}", trunc(id), k)
		}
		if strings.ContainsAny(k, "\n\r\x00 ") {
			t.Errorf("identity %q: key %q holds control bytes or spaces", trunc(id), k)
		}
		if prev, dup := seen[k]; dup {
			t.Errorf("identities %q and %q share key %q", trunc(prev), trunc(id), k)
		}
		seen[k] = id
	}
}

func trunc(s string) string {
	if len(s) > 20 {
		return s[:20] + "..."
	}
	return s
}

func TestRuleNames(t *testing.T) {
	for _, tc := range []struct {
		name string
		want bool
	}{
		{"per-ip", true}, {"api_v2.login", true}, {strings.Repeat("a", 64), true},
		{"", false}, {"a:b", false}, {"{a}", false}, {"a b", false}, {strings.Repeat("a", 65), false}, {"é", false},
	} {
		if got := validRuleName(tc.name); got != tc.want {
			t.Errorf("validRuleName(%q) = %v, want %v", tc.name, got, tc.want)
		}
	}
}
