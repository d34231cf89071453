package keyfunc_test

import (
	"fmt"
	"net/http/httptest"

	"github.com/seed-bff0c9e1/ratelimit/keyfunc"
)

// Behind a load balancer at 10.0.0.0/8 that appends the peer it saw to
// X-Forwarded-For, the client is the right-most address its proxies did
// not add; what the client wrote itself is ignored, in X-Forwarded-For
// and, since Header names the one field the proxies set, in the fields
// they pass through unchanged (here Forwarded).
func ExampleClientIP() {
	key, err := keyfunc.ClientIP(keyfunc.IPConfig{
		TrustedProxies: []string{"10.0.0.0/8"},
		Header:         "X-Forwarded-For", // nginx with proxy_set_header X-Real-IP $remote_addr: "X-Real-IP"
	})
	if err != nil {
		panic(err)
	}
	r := httptest.NewRequest("GET", "/", nil)
	r.RemoteAddr = "10.1.2.3:5555"                           // the load balancer
	r.Header.Set("X-Forwarded-For", "1.1.1.1, 198.51.100.7") // spoofed, then the real client
	r.Header.Set("Forwarded", "for=1.1.1.1")                 // spoofed, passed through
	fmt.Println(key(r))

	r.RemoteAddr = "198.51.100.8:5555" // not a trusted proxy: headers ignored
	fmt.Println(key(r))
	// Output:
	// 198.51.100.7 <nil>
	// 198.51.100.8 <nil>
}

// Join builds one identity from several: per user and route.
func ExampleJoin() {
	key := keyfunc.Join(keyfunc.Constant("alice"), keyfunc.Route())
	r := httptest.NewRequest("POST", "/orders", nil)
	r.Pattern = "POST /orders" // set by net/http's ServeMux, or by chi
	fmt.Println(key(r))
	// Output: alice|POST /orders <nil>
}
