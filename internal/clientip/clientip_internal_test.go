package clientip

import (
	"math/rand/v2"
	"testing"
)

// peer is a Source with a peer and no forwarding fields.
type peer string

func (p peer) Peer() string                       { return string(p) }
func (peer) Forwarded() (fwd, xff, xrip []string) { return nil, nil, nil }

// forwarded is a Source with a peer and each forwarding field set to an
// address of its own, so that a trusted peer's key depends on the field
// read.
type forwarded string

func (p forwarded) Peer() string { return string(p) }
func (forwarded) Forwarded() (fwd, xff, xrip []string) {
	return []string{"for=198.51.100.1"}, []string{"198.51.100.2"}, []string{"198.51.100.3"}
}

// checkKey fails when Key and parsedKey (Key without plainIPv4) disagree
// on p, with no forwarding fields and with all three.
func checkKey(t *testing.T, res *Resolver, p string) {
	t.Helper()
	for _, src := range []Source{peer(p), forwarded(p)} {
		got, gotErr := res.Key(src)
		want, wantErr := res.parsedKey(src, p)
		if got != want || (gotErr == nil) != (wantErr == nil) {
			t.Fatalf("%T: Key(%q) = %q, %v; without the IPv4 reading %q, %v", src, p, got, gotErr, want, wantErr)
		}
	}
}

var resolvers = func() []*Resolver {
	var out []*Resolver
	for _, c := range []struct {
		trusted []string
		header  string
		v4      int
	}{
		{nil, "", 0}, {nil, "", 24}, {[]string{"10.0.0.0/8"}, "", 0}, {[]string{"1.2.3.4"}, "", 0},
		{[]string{"10.0.0.0/8"}, "X-Real-IP", 0}, {[]string{"1.2.3.4"}, "x-forwarded-for", 0},
		{[]string{"1.2.3.4"}, "Forwarded", 24}, {nil, "X-Real-IP", 0},
	} {
		res, err := New(c.trusted, c.header, c.v4, 0)
		if err != nil {
			panic(err)
		}
		out = append(out, res)
	}
	return out
}()

// TestPlainIPv4MatchesParseHost: the fast reading of an IPv4 peer gives
// the key, or the error, that parsing it gives, for hand-picked peers and
// for random strings of the characters addresses are made of.
func TestPlainIPv4MatchesParseHost(t *testing.T) {
	picked := []string{
		"1.2.3.4", "1.2.3.4:80", "10.0.0.1:65535", "10.0.0.1:99999", "10.0.0.1:123456", "0.0.0.0:1",
		"255.255.255.255:1", "256.1.1.1:1", "01.2.3.4:1", "1.02.3.4", "1.2.3.04:5", "1.2.3.4:", "1.2.3.4:x",
		"1.2.3", "1.2.3.4.5", "1.2.3.4567", "1..3.4", ".1.2.3.4", "1.2.3.4 :1", `"1.2.3.4"`, "[1.2.3.4]:80",
		"::ffff:1.2.3.4", "[::ffff:1.2.3.4]:80", "1.2.3.4%eth0", "10.1.2.3:8:9", "", ":", "a.b.c.d:1",
		"1.2.3.4:00080", "001.2.3.4", "1.2.3.255:0",
	}
	for p, want := range map[string]bool{"1.2.3.4:80": true, "255.255.255.255": true, "01.2.3.4": false, "1.2.3.4:": false} {
		if _, _, ok := plainIPv4(p); ok != want {
			t.Errorf("plainIPv4(%q) read it: %v, want %v", p, ok, want)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	const alphabet = "0123456789012345678901234567890.....::[]a\"% "
	for range 50_000 {
		b := make([]byte, rng.IntN(22))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		picked = append(picked, string(b))
	}
	for _, res := range resolvers {
		for _, p := range picked {
			checkKey(t, res, p)
		}
	}
}

func FuzzPlainIPv4(f *testing.F) {
	for _, s := range []string{"1.2.3.4:80", "01.2.3.4", "256.0.0.1:1", "[::1]:2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		for _, res := range resolvers {
			checkKey(t, res, p)
		}
	})
}
