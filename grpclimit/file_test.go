package grpclimit_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/seed-bff0c9e1/ratelimit"
	"github.com/seed-bff0c9e1/ratelimit/config"
	"github.com/seed-bff0c9e1/ratelimit/grpclimit"
	"github.com/seed-bff0c9e1/ratelimit/limiter"
	"github.com/seed-bff0c9e1/ratelimit/memstore"
)

// rulesFile is a rule of one API key's calls, in an HTTP stack and a gRPC
// stack: the two doors share its count.
const rulesFile = `
rules:
  - name: per-key
    key: {header: X-API-Key}
    fixed_window: %d/1h
stacks:
  - name: api
    rules: [per-key]
    match: ["/api/"]
  - name: calls
    rules: [per-key]
    methods: ["/grpc.testing.TestService/*"]
`

// One rules file serves an HTTP handler and a gRPC server: a rule in both
// doors' stacks keeps one count, a call no stack names is not limited, and
// a reload reaches the gRPC server.
func TestOneFileServesBothDoors(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rules.yaml")
	write := func(limit int) {
		if err := os.WriteFile(path, []byte(fmt.Sprintf(rulesFile, limit)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(3)
	limits, err := config.Load(path, memstore.Must())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = limits.Close() })
	r := limits.Middleware("api")(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }))
	get := func() int {
		w := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodGet, "/api/items", nil)
		req.Header.Set("X-API-Key", "k1")
		r.ServeHTTP(w, req)
		return w.Code
	}
	s, err := grpclimit.FromFile(limits)
	if err != nil {
		t.Fatal(err)
	}
	cc, _ := serve(t, s, pipe)
	if a, b := get(), get(); a != 200 || b != 200 {
		t.Fatalf("HTTP: %d, %d", a, b)
	}
	if _, err := call(cc, "k1"); err != nil {
		t.Fatalf("third use, over gRPC: %v", err)
	}
	if _, err := call(cc, "k1"); status.Code(err) != codes.ResourceExhausted {
		t.Errorf("fourth use, over gRPC: %v, want ResourceExhausted (the count is shared)", err)
	}
	if got := get(); got != http.StatusTooManyRequests {
		t.Errorf("fifth use, over HTTP: %d, want 429", got)
	}
	if _, err := call(cc, ""); status.Code(err) != codes.Unauthenticated || status.Convert(err).Message() != "ratelimit: rate limit per-key needs metadata x-api-key" {
		t.Errorf("a call without the key: %v", err)
	}
	write(6)
	if err := limits.Reload(); err != nil {
		t.Fatal(err)
	}
	if _, err := call(cc, "k1"); err != nil {
		t.Errorf("after a reload to 6: %v, want the call admitted on the kept count", err)
	}
}

// A file whose gRPC stack reads an HTTP-only identity is refused at the
// identity's line and column.
func TestFileRefusesAnHTTPIdentityOnAGRPCStack(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rules.yaml")
	data := "rules:\n  - name: per-route\n    key: route\n    gcra: 1/s\nstacks:\n  - name: calls\n    rules: [per-route]\n    methods: [\"/pkg.S/*\"]\n"
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := config.Load(path, memstore.Must())
	var p *config.Problem
	if !errors.As(err, &p) || p.Line != 3 || p.Column != 10 || p.Field != "rules[0].key" {
		t.Fatalf("got %v (%+v), want a problem at 3:10 naming rules[0].key", err, p)
	}
}

// FromFile without a file is a configuration error, as rls.FromFile's is,
// not a panic.
func TestFromNilFile(t *testing.T) {
	if _, err := grpclimit.FromFile(nil); !errors.Is(err, ratelimit.ErrConfig) {
		t.Fatalf("FromFile(nil): %v, want ErrConfig", err)
	}
}

// An operator names a client of a rule keyed by binary metadata by the
// value as the client sends it, base64 (padded or not): the state its
// calls consumed, whose identity is the hash of the value's bytes.
func TestOperatorReachesBinaryMetadata(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rules.yaml")
	data := "rules:\n  - name: per-token\n    key: {metadata: X-Token-Bin}\n    fixed_window: 5/1h\nstacks:\n  - name: calls\n    rules: [per-token]\n    methods: [\"/grpc.testing.TestService/*\"]\n"
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	limits, err := config.Load(path, memstore.Must())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = limits.Close() })
	s, err := grpclimit.FromFile(limits)
	if err != nil {
		t.Fatal(err)
	}
	cc, _ := serve(t, s, pipe)
	token := "\x00\xfftoken" // 8 bytes: base64 pads them
	for range 2 {
		if callWith(t, cc, "x-token-bin", token) {
			t.Fatal("refused")
		}
	}
	ctx := context.Background()
	for _, id := range []string{base64.StdEncoding.EncodeToString([]byte(token)), base64.RawStdEncoding.EncodeToString([]byte(token))} {
		d, err := limits.Status(ctx, "per-token", id, "")
		if err != nil {
			t.Fatalf("Status(%q): %v", id, err)
		}
		if left := d.Results[0].Remaining; left != 3 {
			t.Errorf("Status(%q): %d left, want 3 (two calls with the token)", id, left)
		}
	}
	if _, err := limits.Status(ctx, "per-token", "not base64!", ""); !errors.Is(err, limiter.ErrCheck) {
		t.Errorf("an identity that is not base64: %v, want ErrCheck", err)
	}
	if err := limits.Reset(ctx, "per-token", base64.StdEncoding.EncodeToString([]byte(token))); err != nil {
		t.Fatalf("Reset: %v", err)
	}
}
