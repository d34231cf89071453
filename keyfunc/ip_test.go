package keyfunc_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/seed-bff0c9e1/ratelimit"
	"github.com/seed-bff0c9e1/ratelimit/keyfunc"
)

func request(remote string, headers ...string) *http.Request {
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.RemoteAddr = remote
	for i := 0; i+1 < len(headers); i += 2 {
		r.Header.Add(headers[i], headers[i+1])
	}
	return r
}

func TestClientIP(t *testing.T) {
	behindProxies, err := keyfunc.ClientIP(keyfunc.IPConfig{TrustedProxies: []string{"10.0.0.0/8", "2001:db8:ffff::/48", "192.0.2.1"}})
	if err != nil {
		t.Fatal(err)
	}
	whole, err := keyfunc.ClientIP(keyfunc.IPConfig{IPv6PrefixLen: 128, IPv4PrefixLen: 24})
	if err != nil {
		t.Fatal(err)
	}
	longChain := strings.Repeat("10.1.1.1, ", 500) + "10.2.2.2"
	for _, tc := range []struct {
		name string
		key  keyfunc.KeyFunc
		req  *http.Request
		want string
	}{
		{"peer v4", keyfunc.IP(), request("203.0.113.9:5555"), "203.0.113.9"},
		{"peer v4 without a port", keyfunc.IP(), request("203.0.113.9"), "203.0.113.9"},
		{"trusted peer: XFF hop equal to the peer", behindProxies, request("10.0.0.5:1", "X-Forwarded-For", "10.0.0.5"), "10.0.0.5"},
		{"peer v6 grouped by /64", keyfunc.IP(), request("[2001:db8:1:2:3:4:5:6]:443"), "2001:db8:1:2::/64"},
		{"peer v4-mapped v6", keyfunc.IP(), request("[::ffff:203.0.113.9]:1"), "203.0.113.9"},
		{"peer with zone", keyfunc.IP(), request("[fe80::1%eth0]:80"), "fe80::/64"},
		{"no proxies: XFF ignored", keyfunc.IP(), request("203.0.113.9:1", "X-Forwarded-For", "1.1.1.1"), "203.0.113.9"},
		{"no proxies: X-Real-IP ignored", keyfunc.IP(), request("203.0.113.9:1", "X-Real-IP", "1.1.1.1"), "203.0.113.9"},
		{"no proxies: Forwarded ignored", keyfunc.IP(), request("203.0.113.9:1", "Forwarded", "for=1.1.1.1"), "203.0.113.9"},
		{"untrusted peer: spoof ignored", behindProxies, request("203.0.113.9:1", "X-Forwarded-For", "10.0.0.1, 1.1.1.1"), "203.0.113.9"},
		{"trusted peer: right-most untrusted", behindProxies, request("10.0.0.5:1", "X-Forwarded-For", "6.6.6.6, 198.51.100.7, 10.9.9.9"), "198.51.100.7"},
		{"several XFF lines", behindProxies, request("10.0.0.5:1", "X-Forwarded-For", "6.6.6.6", "X-Forwarded-For", "198.51.100.7, 10.9.9.9"), "198.51.100.7"},
		{"single-address trusted proxy", behindProxies, request("192.0.2.1:1", "X-Forwarded-For", "198.51.100.7"), "198.51.100.7"},
		{"XFF with ports and brackets", behindProxies, request("10.0.0.5:1", "X-Forwarded-For", "[2001:db8:5::1]:8080, 198.51.100.7:99"), "198.51.100.7"},
		{"XFF v6 hop grouped", behindProxies, request("10.0.0.5:1", "X-Forwarded-For", "2001:db8:5::1"), "2001:db8:5::/64"},
		{"all hops trusted: left-most", behindProxies, request("10.0.0.5:1", "X-Forwarded-For", "10.0.0.7, 10.0.0.6"), "10.0.0.7"},
		{"malformed hop stops the walk", behindProxies, request("10.0.0.5:1", "X-Forwarded-For", "1.1.1.1, garbage, 10.0.0.6"), "10.0.0.6"},
		{"empty hop stops the walk", behindProxies, request("10.0.0.5:1", "X-Forwarded-For", "1.1.1.1,,"), "10.0.0.5"},
		{"empty header", behindProxies, request("10.0.0.5:1", "X-Forwarded-For", ""), "10.0.0.5"},
		{"hundreds of trusted hops", behindProxies, request("10.0.0.5:1", "X-Forwarded-For", "198.51.100.7, "+longChain), "198.51.100.7"},
		{"Forwarded wins over XFF", behindProxies, request("10.0.0.5:1", "Forwarded", `for=198.51.100.7;proto=https, for="[2001:db8:ffff::1]:80"`, "X-Forwarded-For", "1.1.1.1"), "198.51.100.7"},
		{"Forwarded quoted v6", behindProxies, request("10.0.0.5:1", "Forwarded", `For="[2001:db8:cafe::17]:4711"`), "2001:db8:cafe::/64"},
		{"Forwarded obfuscated", behindProxies, request("10.0.0.5:1", "Forwarded", "for=_hidden, for=10.0.0.9"), "10.0.0.9"},
		{"Forwarded unknown", behindProxies, request("10.0.0.5:1", "Forwarded", "for=unknown"), "10.0.0.5"},
		{"X-Real-IP from trusted peer", behindProxies, request("10.0.0.5:1", "X-Real-IP", "198.51.100.7"), "198.51.100.7"},
		{"X-Real-IP malformed", behindProxies, request("10.0.0.5:1", "X-Real-IP", "nope"), "10.0.0.5"},
		{"prefix lengths", whole, request("[2001:db8::1]:1"), "2001:db8::1"},
		{"ipv4 /24", whole, request("203.0.113.9:1"), "203.0.113.0/24"},
	} {
		got, err := tc.key(tc.req)
		if err != nil || got != tc.want {
			t.Errorf("%s: got %q, %v, want %q", tc.name, got, err, tc.want)
		}
	}
}

// TestClientIPNamedHeader: with IPConfig.Header naming the field the
// trusted proxies set, a field they pass through as the client sent it is
// never read. Unnamed, the first field present wins (today's behaviour,
// kept for compatibility): the "unnamed" rows are the client's choice
// that naming the field prevents.
func TestClientIPNamedHeader(t *testing.T) {
	behind := func(header string) keyfunc.KeyFunc {
		t.Helper()
		key, err := keyfunc.ClientIP(keyfunc.IPConfig{TrustedProxies: []string{"10.0.0.0/8"}, Header: header})
		if err != nil {
			t.Fatal(err)
		}
		return key
	}
	// nginx with proxy_set_header X-Real-IP $remote_addr, passing the
	// client's X-Forwarded-For through.
	nginx := request("10.0.0.5:1", "X-Real-IP", "198.51.100.7", "X-Forwarded-For", "1.2.3.4")
	// A proxy that appends to X-Forwarded-For only, passing the client's
	// Forwarded (and its spoofed X-Forwarded-For entry) through.
	appender := request("10.0.0.5:1", "Forwarded", "for=1.2.3.4", "X-Forwarded-For", "6.6.6.6, 198.51.100.7")
	for _, tc := range []struct {
		name, header string
		req          *http.Request
		want         string
	}{
		{"nginx X-Real-IP, named", "X-Real-IP", nginx, "198.51.100.7"},
		{"nginx X-Real-IP, named in lower case", "x-real-ip", nginx, "198.51.100.7"},
		{"nginx X-Real-IP, unnamed: the client's X-Forwarded-For wins", "", nginx, "1.2.3.4"},
		{"appended X-Forwarded-For, named", "X-Forwarded-For", appender, "198.51.100.7"},
		{"appended X-Forwarded-For, named in upper case", "X-FORWARDED-FOR", appender, "198.51.100.7"},
		{"appended X-Forwarded-For, unnamed: the client's Forwarded wins", "", appender, "1.2.3.4"},
		{"Forwarded named, the client's X-Forwarded-For ignored", "Forwarded",
			request("10.0.0.5:1", "Forwarded", "for=198.51.100.7", "X-Forwarded-For", "1.2.3.4"), "198.51.100.7"},
		{"named field absent: the peer, not another field", "X-Real-IP",
			request("10.0.0.5:1", "X-Forwarded-For", "1.2.3.4", "Forwarded", "for=1.2.3.4"), "10.0.0.5"},
		{"named field walked past trusted hops", "X-Forwarded-For",
			request("10.0.0.5:1", "X-Forwarded-For", "1.2.3.4, 198.51.100.7, 10.0.0.9"), "198.51.100.7"},
		{"untrusted peer: the named field ignored", "X-Real-IP",
			request("203.0.113.9:1", "X-Real-IP", "1.2.3.4"), "203.0.113.9"},
	} {
		got, err := behind(tc.header)(tc.req)
		if err != nil || got != tc.want {
			t.Errorf("%s: got %q, %v, want %q", tc.name, got, err, tc.want)
		}
	}
}

// An IPv4 peer's key is the host part of RemoteAddr, not formatted again:
// the key costs no allocation.
func TestClientIPv4KeyAllocatesNothing(t *testing.T) {
	key, r := keyfunc.IP(), request("203.0.113.9:5555")
	allocs := testing.AllocsPerRun(100, func() {
		if got, err := key(r); err != nil || got != "203.0.113.9" {
			t.Fatalf("got %q, %v", got, err)
		}
	})
	if allocs != 0 {
		t.Errorf("got %v allocations, want 0", allocs)
	}
}

// A RemoteAddr that is not an address is ErrNoKey, and the error does
// not carry it: it can hold an identity (an address with a port out of
// range, say), and the error reaches the error handler and the log.
func TestClientIPRemoteAddrNotAnIP(t *testing.T) {
	for _, remote := range []string{"", "@", "unix-socket", "[::1", "203.0.113.9:1234567"} {
		_, err := keyfunc.IP()(request(remote))
		if !errors.Is(err, keyfunc.ErrNoKey) {
			t.Errorf("RemoteAddr %q: got %v, want ErrNoKey", remote, err)
		}
		if remote != "" && strings.Contains(err.Error(), remote) {
			t.Errorf("RemoteAddr %q: the error %q carries it", remote, err)
		}
	}
}

func TestIPConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		cfg  keyfunc.IPConfig
		want string
	}{
		{keyfunc.IPConfig{TrustedProxies: []string{"10.0.0.0/33"}}, "TrustedProxies"},
		{keyfunc.IPConfig{TrustedProxies: []string{"proxy.local"}}, "TrustedProxies"},
		{keyfunc.IPConfig{IPv4PrefixLen: 33}, "IPv4PrefixLen"},
		{keyfunc.IPConfig{IPv6PrefixLen: -1}, "IPv6PrefixLen"},
		{keyfunc.IPConfig{Header: "X-Client-IP"}, "Header must be Forwarded, X-Forwarded-For or X-Real-IP"},
		{keyfunc.IPConfig{Header: " X-Real-IP"}, "Header"},
		{keyfunc.IPConfig{Header: "True-Client-IP", TrustedProxies: []string{"10.0.0.0/8"}}, "Header"},
	} {
		_, err := keyfunc.ClientIP(tc.cfg)
		if !errors.Is(err, ratelimit.ErrConfig) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: got %v, want ErrConfig naming %s", tc.cfg, err, tc.want)
		}
	}
}

// FuzzClientAddr: no header can make the resolver panic or return an empty
// or invalid key, an untrusted peer is always its own client, and with
// IPConfig.Header named the other forwarding fields change nothing.
func FuzzClientAddr(f *testing.F) {
	f.Add("10.0.0.5:1", "1.1.1.1, 10.0.0.6", `for="[2001:db8::1]:80"`, "2.2.2.2")
	f.Add("203.0.113.9:1", "garbage", "for=unknown", "")
	f.Add("[fe80::1%eth0]:80", "[::1]:x, ,", `for="[`, "[::ffff:1.2.3.4]")
	key, err := keyfunc.ClientIP(keyfunc.IPConfig{TrustedProxies: []string{"10.0.0.0/8", "fe80::/10"}})
	if err != nil {
		f.Fatal(err)
	}
	named, err := keyfunc.ClientIP(keyfunc.IPConfig{TrustedProxies: []string{"10.0.0.0/8", "fe80::/10"}, Header: "X-Real-IP"})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, remote, xff, fwd, real string) {
		r := request(remote, "X-Forwarded-For", xff, "Forwarded", fwd, "X-Real-IP", real)
		got, gotErr := named(r)
		want, wantErr := named(request(remote, "X-Real-IP", real))
		if got != want || (gotErr == nil) != (wantErr == nil) {
			t.Fatalf("X-Real-IP named: %q, %v with the other fields, %q, %v without", got, gotErr, want, wantErr)
		}
		got, err := key(r)
		if err != nil {
			if !errors.Is(err, keyfunc.ErrNoKey) {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		if !validKey(got) {
			t.Fatalf("invalid key %q", got)
		}
		peer, _ := keyfunc.IP()(request(remote))
		p, _ := netip.ParsePrefix(peer)
		if a, err := netip.ParseAddr(peer); err == nil {
			p = netip.PrefixFrom(a, a.BitLen())
		}
		trusted := netip.MustParsePrefix("10.0.0.0/8").Contains(p.Addr()) || netip.MustParsePrefix("fe80::/10").Contains(p.Addr())
		if !trusted && got != peer {
			t.Fatalf("untrusted peer %q: key %q, want %q", remote, got, peer)
		}
	})
}

// validKey reports whether k is an address or a masked prefix.
func validKey(k string) bool {
	if _, err := netip.ParseAddr(k); err == nil {
		return true
	}
	p, err := netip.ParsePrefix(k)
	return err == nil && p == p.Masked()
}
