package parse

import (
	"slices"
	"strings"
	"testing"
)

// TestUnixProxies: client_ip.trusted_proxies takes "unix", the peers on a
// Unix socket, as keyfunc.IPConfig.TrustedProxies does; the exempt
// networks, which are client addresses, do not.
func TestUnixProxies(t *testing.T) {
	data := `client_ip:
  trusted_proxies: [unix, 10.0.0.0/8]
  header: X-Real-IP
exempt: [unix]
rules:
  - name: a
    key: ip
    fixed_window: 1/s
stacks:
  - name: s
    rules: [a]
`
	_, err := Read("f.yaml", []byte(data), nil)
	if err == nil || !strings.HasPrefix(err.Error(), `f.yaml:4:10: exempt[0]: found "unix"`) || strings.Contains(err.Error(), "trusted_proxies") {
		t.Fatalf("got %v, want one problem, at exempt[0]", err)
	}
	f, err := Read("f.yaml", []byte(strings.Replace(data, "exempt: [unix]\n", "", 1)), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.ClientIP.TrustedProxies; !slices.Equal(got, []string{"unix", "10.0.0.0/8"}) {
		t.Errorf("trusted proxies %q, want unix and 10.0.0.0/8", got)
	}
}
