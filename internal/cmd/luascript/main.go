// Command luascript prints the script the limiter sends to Redis for a set
// of algorithms, to read it or run it with redis-cli:
//
//	go run ./internal/cmd/luascript gc fw > /tmp/stack.lua
//	redis-cli --eval /tmp/stack.lua ratelimit:{demo:me}:gc , '' 1 gc 5 1000000 10 1
//	go run ./internal/cmd/luascript -refund > /tmp/refund.lua
//
// Codes: fw (fixed window), sl (sliding log), sw (sliding window), tb
// (token bucket), lb (leaky bucket), gc (GCRA); none means all six.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/seed-bff0c9e1/ratelimit/internal/script"
)

func main() {
	refund := flag.Bool("refund", false, "print the refund script (for every algorithm)")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: luascript [-refund] [fw|sl|sw|tb|lb|gc ...]")
	}
	flag.Parse()
	m, ok := script.MaskOf(flag.Args()...)
	if !ok {
		flag.Usage()
		os.Exit(2)
	}
	if m == 0 || *refund {
		m = script.All
	}
	fmt.Print(script.Source(m, *refund))
}
