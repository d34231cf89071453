package main

import (
	"strings"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// The example serves, is refused on its third plain call with the
// refusal's details, and its paced calls succeed.
func TestExample(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: miniredis.RunT(t).Addr()})
	defer rdb.Close()
	var out strings.Builder
	if err := run(&out, rdb, 2); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []string{
		"plain call 2: OK",
		"plain call 3: ResourceExhausted",
		"RetryInfo: retry in",
		"QuotaFailure: per-key: quota of 2 per 1s exhausted",
		"2 paced calls through grpclimit.Client, all answered OK",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
