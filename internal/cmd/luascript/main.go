// Command luascript prints the script the limiter sends to Redis for a set
// of algorithms, to read it or run it with redis-cli:
//
//	go run ./internal/cmd/luascript gc fw > /tmp/stack.lua
//	redis-cli --eval /tmp/stack.lua ratelimit:{demo:me}:gce , '' 1 gc:5:1000000:10 1 '' ''
//	go run ./internal/cmd/luascript -refund > /tmp/refund.lua
//	go run ./internal/cmd/luascript -block > /tmp/block.lua
//	go run ./internal/cmd/luascript -library > /tmp/library.lua
//	redis-cli FUNCTION LOAD "$(cat /tmp/library.lua)"
//
// Codes: fw (fixed window), sl (sliding log), sw (sliding window), tb
// (token bucket), lb (leaky bucket), gc (GCRA), qu (queue), cc
// (concurrency); none means all.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/seed-bff0c9e1/ratelimit/internal/script"
)

func main() {
	refund := flag.Bool("refund", false, "print the refund script (for every algorithm)")
	block := flag.Bool("block", false, "print the block script")
	library := flag.Bool("library", false, "print the Redis function library (every algorithm and driver)")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: luascript [-refund | -block | -library] [fw|sl|sw|tb|lb|gc|qu|cc ...]")
	}
	flag.Parse()
	m, ok := script.MaskOf(flag.Args()...)
	if !ok {
		flag.Usage()
		os.Exit(2)
	}
	switch {
	case *library:
		fmt.Print(script.Library().Source)
	case *block:
		fmt.Print(script.Block().Source())
	case *refund:
		fmt.Print(script.Refund().Source())
	default:
		if m == 0 {
			m = script.All
		}
		fmt.Print(script.Stack(m).Source())
	}
}
