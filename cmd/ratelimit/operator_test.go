package main

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seed-bff0c9e1/ratelimit/config"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/redistest"
	"github.com/seed-bff0c9e1/ratelimit/redisstore"
)

// operatorFile is the rules file of the operator tests: a blockable rule
// by API key with a plan, and a rule by a key function the program
// registers.
const operatorFile = `rules:
  - name: per-key
    key: {header: X-API-Key}
    fixed_window: 20/1m
    blockable: true
    plans:
      header: X-Plan
      values:
        pro: {fixed_window: 100/1h}
  - name: per-user
    key: {func: user}
    fixed_window: 5/1m
stacks:
  - name: api
    rules: [per-key]
  - name: users
    rules: [per-user]
`

// service loads path on the Redis server rdb as a service does, and
// returns a function that serves a request with API key k through stack
// api and returns its status.
func service(t *testing.T, path string, rdb redis.Scripter) func(k string) int {
	t.Helper()
	s, err := redisstore.New(rdb)
	if err != nil {
		t.Fatal(err)
	}
	limits, err := config.Load(path, s, config.WithKeyFunc("user", noRequests))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { limits.Close() })
	h := limits.Middleware("api")(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	return func(k string) int {
		r := httptest.NewRequest("GET", "/", nil)
		r.Header.Set("X-API-Key", k)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
}

// runIn runs the command with args, returning its exit status, stdout
// and stderr.
func runIn(args ...string) (int, string, string) {
	var out, errs bytes.Buffer
	code := run(args, &out, &errs)
	return code, out.String(), errs.String()
}

// TestOperatorCommands: status, reset, block and unblock, run against a
// real redis-server, a 3-master Cluster (given one node) and a master
// behind a sentinel, reach the state a service that loaded the same file
// keeps for the raw API key, and say so in words.
func TestOperatorCommands(t *testing.T) {
	for _, b := range []struct {
		redisType string
		start     func(t *testing.T) (rdb redis.Scripter, url string)
	}{
		{"single", func(t *testing.T) (redis.Scripter, string) {
			srv := redistest.Start(t)
			return srv.Client, "redis://" + srv.Addr
		}},
		{"cluster", func(t *testing.T) (redis.Scripter, string) {
			c := redistest.StartCluster(t, 3, 0)
			return c.Client, "redis://" + c.Nodes[0].Addr
		}},
		{"sentinel", func(t *testing.T) (redis.Scripter, string) {
			s := redistest.StartSentinel(t)
			return s.Client, "redis://" + s.Sentinel.Addr + "?master_name=" + redistest.SentinelMaster
		}},
	} {
		t.Run(b.redisType, func(t *testing.T) {
			rdb, url := b.start(t)
			operatorCommands(t, rdb, url, b.redisType)
		})
	}
}

// operatorCommands runs TestOperatorCommands' steps on the Redis of rdb,
// which the command reaches at url as -redis-type redisType.
func operatorCommands(t *testing.T, rdb redis.Scripter, url, redisType string) {
	path := filepath.Join(t.TempDir(), "rules.yaml")
	if err := os.WriteFile(path, []byte(operatorFile), 0o644); err != nil {
		t.Fatal(err)
	}
	serve := service(t, path, rdb)
	with := func(cmd string, rest ...string) []string {
		return append([]string{cmd, "-config", path, "-redis", url, "-redis-type", redisType, "-funcs", "user"}, rest...)
	}
	serve("k")
	serve("k")
	for _, tc := range []struct {
		args []string
		code int
		out  string // the start of stdout, or of stderr when code is not 0
	}{
		{with("status", "per-key", "k"), 0, "per-key: 2 of 20 used, 18 left, full again in "},
		{with("status", "-plan", "pro", "per-key", "k"), 0, "per-key (plan pro): 0 of 100 used, 100 left\n"},
		{with("status", "per-user", "alice"), 0, "per-user: 0 of 5 used, 5 left\n"},
		{with("block", "-for", "1h", "per-key", "k"), 0, "per-key: blocked for 1h0m0s\n"},
		{with("block", "-for", "7d", "per-key", "k7"), 0, "per-key: blocked for 168h0m0s\n"},
		{with("status", "per-key", "k"), 0, "per-key: blocked for 1h0m0s\n"},
		{with("unblock", "per-key", "k"), 0, "per-key: unblocked\n"},
		{with("unblock", "per-key", "k"), 1, "ratelimit unblock: ratelimit: no state for this rule and identity"},
		{with("reset", "per-key", "k"), 0, "per-key: reset; the client starts afresh\n"},
		{with("status", "per-key", "k"), 0, "per-key: 0 of 20 used, 20 left\n"},
		{with("reset", "per-key", "k"), 1, "ratelimit reset: ratelimit: no state"},
		{with("status", "nope", "k"), 1, `ratelimit status: ratelimit: invalid check: no rule "nope" in force in ` + path + " (the rules its stacks use: per-key, per-user)"},
		{with("status", "per-key"), 2, "ratelimit status: missing IDENTITY"},
		{with("status", "per-key", ""), 2, "ratelimit status: empty IDENTITY"},
		{[]string{"status", "per-key", "k", "-config", path, "-redis", url}, 2, `ratelimit status: flag "-config" after RULE IDENTITY: flags go first`},
		{with("block", "per-key", "k"), 2, "ratelimit block: -for is required"},
		{with("status", "-plan", "gold", "per-key", "k"), 1, `ratelimit status: ratelimit: invalid check: rule "per-key" has no plan "gold" (its plans: pro)`},
	} {
		code, out, errs := runIn(tc.args...)
		got := out
		if tc.code != 0 {
			got = errs
		}
		if code != tc.code || !strings.HasPrefix(got, tc.out) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit %d and %q", strings.Join(tc.args, " "), code, out, errs, tc.code, tc.out)
		}
	}
	if _, out, _ := runIn(with("block", "-for", "1h", "per-key", "k")...); out == "" || serve("k") != 429 {
		t.Errorf("a blocked key's request was served: %q", out)
	}
	if _, out, _ := runIn(with("status", "per-key", "k")...); out != "per-key: blocked for 1h0m0s\n" {
		t.Errorf("status of a blocked key: %q", out)
	}
}

// TestOperatorUnreachableRedis: a refused connection and a server that
// never answers both fail within about the timeout, exit 1 and print the
// cause.
func TestOperatorUnreachableRedis(t *testing.T) {
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	go func() { // accepts, and never answers
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := closed.Addr().String()
	closed.Close()
	var logged atomic.Int32 // what go-redis logs on its own: the command says it once
	redis.SetLogger(recordLog{&logged})
	for _, tc := range []struct{ addr, cause string }{{refused, "refused"}, {silent.Addr().String(), "timeout"}} {
		start := time.Now()
		code, out, errs := runIn("status", "-config", "../../examples/config/ratelimit.yaml", "-redis", "redis://"+tc.addr, "-timeout", "1s", "per-key", "k")
		if took := time.Since(start); took > 3*time.Second {
			t.Errorf("%s: took %v", tc.addr, took)
		}
		if code != 1 || out != "" || !strings.Contains(errs, "ratelimit: backend error") || !strings.Contains(errs, tc.cause) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 1 and the cause (%s)", tc.addr, code, out, errs, tc.cause)
		}
	}
	if n := logged.Load(); n > 0 {
		t.Errorf("go-redis logged %d lines of its own besides the command's message", n)
	}
	if code, _, errs := runIn("status", "-config", "../../examples/config/ratelimit.yaml", "-redis", "http://x", "per-key", "k"); code != 1 || !strings.Contains(errs, "-redis") {
		t.Errorf("a URL not redis://: exit %d, stderr %q", code, errs)
	}
	if code, _, errs := runIn("status", "-config", "../../examples/config/ratelimit.yaml", "-redis", "redis://x", "-redis-type", "ring", "per-key", "k"); code != 2 || !strings.Contains(errs, `-redis-type "ring"; allowed: single, cluster, sentinel`) {
		t.Errorf("an unknown -redis-type: exit %d, stderr %q", code, errs)
	}
	if code, _, errs := runIn("status", "-config", "../../examples/config/ratelimit.yaml", "-redis", "redis://127.0.0.1:1", "-redis-type", "sentinel", "per-key", "k"); code != 1 || !strings.Contains(errs, "master_name") {
		t.Errorf("a sentinel URL without master_name: exit %d, stderr %q", code, errs)
	}
}

// TestRedisURLErrorsQuoteNoPassword: a -redis URL that does not parse
// fails with exit 1 and the reason, for each -redis-type, without
// printing the URL, whose password would end up in a terminal's
// scrollback or a CI log.
func TestRedisURLErrorsQuoteNoPassword(t *testing.T) {
	const password = "hunter2-s3cret"
	for _, tc := range []struct{ redisType, url string }{
		{"single", "redis://:" + password + "@localhost:port"},
		{"cluster", "redis://:" + password + "@localhost:port"},
		{"sentinel", "redis://:" + password + "@localhost:port?master_name=m"},
		{"single", "redis://user:" + password + "@local%zzhost:6379"},
	} {
		code, out, errs := runIn("status", "-config", "../../examples/config/ratelimit.yaml", "-redis", tc.url, "-redis-type", tc.redisType, "per-key", "k")
		if code != 1 || out != "" || !strings.Contains(errs, "-redis") {
			t.Errorf("%s %s: exit %d, stdout %q, stderr %q; want exit 1 naming -redis", tc.redisType, tc.url, code, out, errs)
		}
		if strings.Contains(errs, password) {
			t.Errorf("%s %s: stderr %q prints the password", tc.redisType, tc.url, errs)
		}
	}
}

// TestUsage: no command or an unknown one is a usage error; help is not.
func TestUsage(t *testing.T) {
	if code, _, errs := runIn(); code != 2 || !strings.Contains(errs, "ratelimit status -config FILE") {
		t.Errorf("no command: exit %d, stderr %q", code, errs)
	}
	if code, _, errs := runIn("stats"); code != 2 || !strings.Contains(errs, `unknown command "stats"`) {
		t.Errorf("unknown command: exit %d, stderr %q", code, errs)
	}
	if code, out, _ := runIn("help"); code != 0 || !strings.Contains(out, "ratelimit check") {
		t.Errorf("help: exit %d, stdout %q", code, out)
	}
}

// recordLog counts the lines go-redis logs.
type recordLog struct{ n *atomic.Int32 }

func (r recordLog) Printf(context.Context, string, ...any) { r.n.Add(1) }
