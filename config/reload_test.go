package config_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seed-bff0c9e1/ratelimit"
	"github.com/seed-bff0c9e1/ratelimit/algorithms"
	"github.com/seed-bff0c9e1/ratelimit/config"
	"github.com/seed-bff0c9e1/ratelimit/internal/testkit/redistest"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/memstore"
	"github.com/seed-bff0c9e1/ratelimit/redisstore"
	"github.com/seed-bff0c9e1/ratelimit/store"
)

// backend is a store the reload tests run on.
type backend struct {
	name  string
	store store.Store
}

// stores are the memstore, and Redis stores on miniredis and, when
// redis-server is installed, a real server.
func stores(t *testing.T) []backend {
	out := []backend{{"memstore", memstore.Must()}}
	for _, b := range redistest.Backends(t) {
		// A long timeout: 64 goroutines under the race detector
		// are slow, and the test is about reloads, not timeouts.
		s, err := redisstore.New(b.Client, redisstore.WithTimeout(10*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, backend{b.Name, s})
	}
	return out
}

// version is a rules file, under the key prefix, whose stack "api" holds
// the rule kept (the same in every version: 1000 an hour for everyone)
// and a rule named after v, which never refuses.
func version(prefix string, v int) string {
	return fmt.Sprintf(`prefix: %s
rules:
  - name: kept
    key: {constant: all}
    fixed_window: 1000/1h anchored
  - name: other-%d
    key: ip
    sliding_window: %d/1h
stacks:
  - name: api
    rules: [kept, other-%d]
`, prefix, v, 1_000_000+v, v)
}

// replace puts contents at path as a Kubernetes ConfigMap update does
// (path is a symlink to ..data/<file>; ..data is swapped to a new
// directory at once), or as an editor's save does (a new file renamed
// over the old), by how.
func replace(t *testing.T, dir, how, contents string, n int) {
	t.Helper()
	switch how {
	case "configmap":
		ts := filepath.Join(dir, fmt.Sprintf("..%d", n))
		if err := os.Mkdir(ts, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ts, "rules.yaml"), []byte(contents), 0o644); err != nil {
			t.Fatal(err)
		}
		tmp := filepath.Join(dir, "..data_tmp")
		if err := os.Symlink(filepath.Base(ts), tmp); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(dir, "..data")); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Lstat(filepath.Join(dir, "rules.yaml")); err != nil {
			if err := os.Symlink(filepath.Join("..data", "rules.yaml"), filepath.Join(dir, "rules.yaml")); err != nil {
				t.Fatal(err)
			}
		}
	case "rename":
		tmp := filepath.Join(dir, ".rules.yaml.swp")
		if err := os.WriteFile(tmp, []byte(contents), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(dir, "rules.yaml")); err != nil {
			t.Fatal(err)
		}
	}
}

// waitFor waits, a bounded number of times, until cond holds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for range 5000 {
		if cond() {
			return
		}
		time.Sleep(2 * time.Millisecond)
	}
	t.Fatalf("%s did not happen", what)
}

// TestReloadUnderLoad: 64 goroutines send requests through the stack
// "api" while Watch reloads the file 20 times, replaced as a ConfigMap
// update and as an editor's save. No request is dropped or decided by no
// rules (each is answered 200 or 429, with the rate-limit headers), and
// the rule every version keeps keeps its count across the reloads: it
// admits exactly its 1000, no more.
func TestReloadUnderLoad(t *testing.T) {
	for _, s := range stores(t) {
		for _, how := range []string{"configmap", "rename"} {
			t.Run(s.name+"/"+how, func(t *testing.T) {
				dir := t.TempDir()
				replace(t, dir, how, version(how, 0), 0)
				var reloads, failures atomic.Int64
				limits, err := config.Load(filepath.Join(dir, "rules.yaml"), s.store, config.WithReloadHook(func(err error) {
					if err != nil {
						failures.Add(1)
						t.Error(err)
					}
					reloads.Add(1)
				}))
				if err != nil {
					t.Fatal(err)
				}
				defer limits.Close()
				h := limits.Middleware("api")(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				go limits.Watch(ctx, time.Millisecond)

				var done atomic.Bool
				var ok, denied, other atomic.Int64
				var wg sync.WaitGroup
				for range 64 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for i := 0; i < 400 && !(done.Load() && i >= 20); i++ {
							w := httptest.NewRecorder()
							h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil))
							switch {
							case w.Header().Get("X-RateLimit-Limit") == "":
								other.Add(1) // not decided by the rules
							case w.Code == http.StatusOK:
								ok.Add(1)
							case w.Code == http.StatusTooManyRequests:
								denied.Add(1)
							default:
								other.Add(1)
							}
						}
					}()
				}
				for n := 1; n <= 20; n++ {
					replace(t, dir, how, version(how, n), n)
					waitFor(t, fmt.Sprintf("reload %d", n), func() bool { return reloads.Load() == int64(n) })
				}
				done.Store(true)
				wg.Wait()
				if other.Load() != 0 {
					t.Errorf("%d requests not answered 200 or 429 with rate-limit headers", other.Load())
				}
				if total := ok.Load() + denied.Load(); ok.Load() != min(total, 1000) {
					t.Errorf("%d of %d requests admitted, want exactly %d", ok.Load(), total, min(total, 1000))
				}
				if failures.Load() != 0 {
					t.Errorf("%d reloads failed", failures.Load())
				}
			})
		}
	}
}

// leased is a file whose stack "api" holds a leased rule, pool, and,
// unless without, nothing else; without, the stack holds only kept.
func leased(without bool) string {
	stack := "[pool]"
	if without {
		stack = "[kept]"
	}
	return `rules:
  - name: pool
    key: {constant: all}
    fixed_window: 1000/1h
    lease: 1s
  - name: kept
    key: {constant: all}
    fixed_window: 10/1h
stacks:
  - name: api
    rules: ` + stack + "\n" + strings.Repeat("# removed\n", boolInt(without))
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestReloadGivesBackRemovedLease: a leased rule holds more units than it
// spent; a reload that removes it gives them back at once (the old
// limiter is closed), so the store has exactly what was spent consumed.
func TestReloadGivesBackRemovedLease(t *testing.T) {
	now := time.Date(2030, 1, 1, 10, 0, 0, 0, time.UTC)
	clock := limiter.WithClock(func() time.Time { return now })
	for _, s := range stores(t) {
		t.Run(s.name, func(t *testing.T) {
			limits, path := load(t, s.store, leased(false), config.WithLimiterOptions(clock))
			h := limits.Middleware("api")(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
			for range 3 {
				h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil))
			}
			admin, err := limiter.New(s.store, []limiter.Rule{{Name: "pool", Algorithm: algorithms.FixedWindow{Limit: 1000, Window: time.Hour}}}, clock)
			if err != nil {
				t.Fatal(err)
			}
			before := remaining(t, admin)
			if before >= 997 {
				t.Fatalf("the store has %d left: the rule took no lease beyond the 3 spent", before)
			}
			remove := strings.Replace(leased(true), "  - name: pool\n    key: {constant: all}\n    fixed_window: 1000/1h\n    lease: 1s\n", "", 1)
			write(t, path, remove)
			if err := limits.Reload(); err != nil {
				t.Fatal(err)
			}
			if got := remaining(t, admin); got != 997 {
				t.Errorf("after the reload the store has %d left of 1000, want 997 (3 spent; %d were held)", got, 997-before)
			}
		})
	}
}

func remaining(t *testing.T, admin *limiter.Limiter) int {
	t.Helper()
	d, err := admin.Status(context.Background(), "pool", "all")
	if err != nil {
		t.Fatal(err)
	}
	return d.Results[0].Remaining
}

// load writes contents to a rules file of its own and loads it on s with
// opts; the Limits close when the test ends. It returns them with the
// file's path, for tests that rewrite it.
func load(t *testing.T, s store.Store, contents string, opts ...config.Option) (*config.Limits, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "rules.yaml")
	write(t, path, contents)
	limits, err := config.Load(path, s, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { limits.Close() })
	return limits, path
}

func write(t *testing.T, path, contents string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(contents), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestInvalidReloadKeepsRules: a file with a problem, or one without a
// stack the program wires, changes nothing: Reload returns the error
// (with the problem's position), the reload hook gets it, and requests
// go on being decided by the old rules, on the same counts.
func TestInvalidReloadKeepsRules(t *testing.T) {
	for _, s := range stores(t) {
		t.Run(s.name, func(t *testing.T) {
			const good = `rules:
  - name: two
    key: {constant: all}
    fixed_window: 2/1h anchored
stacks:
  - name: api
    rules: [two]
`
			var reported []error
			limits, path := load(t, s.store, good, config.WithReloadHook(func(err error) { reported = append(reported, err) }))
			h := limits.Middleware("api")(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
			serve := func() int {
				w := httptest.NewRecorder()
				h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil))
				return w.Code
			}
			if got := serve(); got != http.StatusOK {
				t.Fatalf("first request: %d", got)
			}
			for _, bad := range []struct{ contents, want string }{
				{strings.Replace(good, "2/1h anchored", "2/1h anchord", 1), `rules.yaml:4:19: rules[0].fixed_window: found "2/1h anchord"`},
				{strings.Replace(good, "name: api", "name: web", 1), `stacks: found no stack "api"`},
				{"rules: [\n", "(syntax)"},
			} {
				write(t, path, bad.contents)
				err := limits.Reload()
				if !errors.Is(err, ratelimit.ErrConfig) || !strings.Contains(err.Error(), bad.want) {
					t.Errorf("reload: %v, want an ErrConfig saying %s", err, bad.want)
				}
				if len(reported) == 0 || reported[len(reported)-1] != err {
					t.Errorf("the hook got %v, want the error", reported)
				}
			}
			if got := serve(); got != http.StatusOK {
				t.Errorf("second request: %d, want 200 (the old limit of 2, one used)", got)
			}
			if got := serve(); got != http.StatusTooManyRequests {
				t.Errorf("third request: %d, want 429 (the old limit of 2, on the same count)", got)
			}
		})
	}
}

// TestWatchReportsAnInvalidChangeOnce: Watch reports an invalid version
// once, keeps the old rules, and puts the next valid version in force.
func TestWatchReportsAnInvalidChangeOnce(t *testing.T) {
	dir := t.TempDir()
	replace(t, dir, "configmap", version("w", 0), 0)
	var mu sync.Mutex
	var reported []error
	limits, err := config.Load(filepath.Join(dir, "rules.yaml"), memstore.Must(), config.WithReloadHook(func(err error) {
		mu.Lock()
		defer mu.Unlock()
		reported = append(reported, err)
	}))
	if err != nil {
		t.Fatal(err)
	}
	defer limits.Close()
	count := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(reported)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go limits.Watch(ctx, time.Millisecond)
	replace(t, dir, "configmap", "rules: {}\n", 1)
	waitFor(t, "the invalid version's report", func() bool { return count() == 1 })
	replace(t, dir, "configmap", version("w", 2), 2)
	waitFor(t, "the valid version's reload", func() bool { return count() == 2 })
	mu.Lock()
	defer mu.Unlock()
	if reported[0] == nil || reported[1] != nil {
		t.Errorf("reports %v, want an error, then nil", reported)
	}
}

// TestReloadHook: the hook runs once the Limits are free again (it may
// wire a stack), and hears that the rules in force are fine again when a
// failed version is replaced by them.
func TestReloadHook(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "rules.yaml")
	write(t, path, version("hook", 0))
	var limits *config.Limits
	var got []string
	limits, err := config.Load(path, memstore.Must(), config.WithReloadHook(func(err error) {
		_ = limits.Middleware("api") // takes the Limits' lock
		got = append(got, fmt.Sprint(err != nil))
	}))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		write(t, path, "rules: [")
		_ = limits.Reload()
		write(t, path, version("hook", 0))
		_ = limits.Reload()
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("a hook that wires a stack never returned") // deadlocked: Close would too
	}
	limits.Close()
	if want := "[true false]"; fmt.Sprint(got) != want {
		t.Errorf("hook heard failed = %v, want %s", got, want)
	}
}
