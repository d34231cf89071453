package main

import (
	"fmt"
	"math/rand/v2"
	"strconv"

	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
)

// domain is the configuration's domain.
const domain = "rlsbench"

// limits are the configuration's limits: per client address and per
// tenant-and-path pair a minute, the global key a second, the hot key an
// hour.
type limits struct {
	perClient, global, perPath, hot int
}

// configYAML is the configuration both servers load, in the reference's
// format: the three descriptors every request carries, and the hot key
// (one count per value, so that each hot-key run has a fresh one).
func configYAML(l limits) string {
	return fmt.Sprintf(`domain: %s
descriptors:
  - key: remote_address
    rate_limit: {unit: minute, requests_per_unit: %d}
  - key: generic_key
    value: global
    rate_limit: {unit: second, requests_per_unit: %d}
  - key: tenant
    descriptors:
      - key: path
        rate_limit: {unit: minute, requests_per_unit: %d}
  - key: hot
    rate_limit: {unit: hour, requests_per_unit: %d}
`, domain, l.perClient, l.global, l.perPath, l.hot)
}

// traffic holds the descriptors requests are made of, built once and
// shared read-only by every caller.
type traffic struct {
	clients []*ratelimitv3.RateLimitDescriptor // one per client address
	global  *ratelimitv3.RateLimitDescriptor
	pairs   []*ratelimitv3.RateLimitDescriptor // tenant and path
	skew    float64                            // the Zipf exponent over clients
}

// newTraffic builds the descriptors of n client addresses and of tenants
// times paths pairs.
func newTraffic(n, tenants, paths int, skew float64) *traffic {
	t := &traffic{global: descriptor("generic_key", "global"), skew: skew}
	for i := range n {
		ip := fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255)
		t.clients = append(t.clients, descriptor("remote_address", ip))
	}
	for i := range tenants {
		for j := range paths {
			t.pairs = append(t.pairs, descriptor("tenant", "t"+strconv.Itoa(i), "path", "/api/v1/r"+strconv.Itoa(j)))
		}
	}
	return t
}

// descriptor is a descriptor of key, value pairs.
func descriptor(kv ...string) *ratelimitv3.RateLimitDescriptor {
	d := &ratelimitv3.RateLimitDescriptor{}
	for i := 0; i+1 < len(kv); i += 2 {
		d.Entries = append(d.Entries, &ratelimitv3.RateLimitDescriptor_Entry{Key: kv[i], Value: kv[i+1]})
	}
	return d
}

// picker draws requests for one caller: a client address on the Zipf
// law, the global key, a tenant-and-path pair uniformly.
type picker struct {
	t    *traffic
	r    *rand.Rand
	zipf *rand.Zipf
}

// picker returns a caller's picker, seeded by seed.
func (t *traffic) picker(seed uint64) *picker {
	r := rand.New(rand.NewPCG(seed, 0x726c7362656e6368))
	return &picker{t: t, r: r, zipf: rand.NewZipf(r, t.skew, 1, uint64(len(t.clients)-1))}
}

// request is the next request.
func (p *picker) request() *rlsv3.RateLimitRequest {
	return &rlsv3.RateLimitRequest{Domain: domain, Descriptors: []*ratelimitv3.RateLimitDescriptor{
		p.t.clients[p.zipf.Uint64()], p.t.global, p.t.pairs[p.r.IntN(len(p.t.pairs))],
	}}
}

// hotRequest is a request on the hot key's value v alone.
func hotRequest(v string) *rlsv3.RateLimitRequest {
	return &rlsv3.RateLimitRequest{Domain: domain, Descriptors: []*ratelimitv3.RateLimitDescriptor{descriptor("hot", v)}}
}
