package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"google.golang.org/protobuf/encoding/protojson"
)

// do sends a request to h and returns the status and body.
func do(t *testing.T, h http.Handler, method, path, body string) (int, string) {
	t.Helper()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(method, path, strings.NewReader(body)))
	b, _ := io.ReadAll(w.Result().Body)
	return w.Code, string(b)
}

func TestJSONEndpoint(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "mine.yaml"), perDay("1"))
	svc, _ := testService(t, dir)
	var serving atomic.Bool
	serving.Store(true)
	h := httpHandler(svc, &serving)
	req := `{"domain":"mine","descriptors":[{"entries":[{"key":"user","value":"u1"}]}]}`
	for i, want := range []struct {
		status int
		code   rlsv3.RateLimitResponse_Code
	}{{http.StatusOK, rlsv3.RateLimitResponse_OK}, {http.StatusTooManyRequests, rlsv3.RateLimitResponse_OVER_LIMIT}} {
		status, body := do(t, h, http.MethodPost, "/json", req)
		var res rlsv3.RateLimitResponse
		if err := protojson.Unmarshal([]byte(body), &res); err != nil {
			t.Fatalf("call %d: the body is not a RateLimitResponse: %v\n%s", i+1, err, body)
		}
		if status != want.status || res.OverallCode != want.code || len(res.Statuses) != 1 {
			t.Fatalf("call %d: %d %v, want %d %v with one status", i+1, status, &res, want.status, want.code)
		}
	}
	for _, bad := range []string{`{"domain":`, `{"domain":"mine","nonsense":1}`, `{"domain":"mine"}`} {
		if status, _ := do(t, h, http.MethodPost, "/json", bad); status != http.StatusBadRequest {
			t.Errorf("%s: %d, want 400", bad, status)
		}
	}
	// Any method, as the reference's handler: the body is the request.
	for _, m := range []string{http.MethodGet, http.MethodPut} {
		other := `{"domain":"mine","descriptors":[{"entries":[{"key":"user","value":"` + m + `"}]}]}`
		if status, body := do(t, h, m, "/json", other); status != http.StatusOK || !strings.Contains(body, `"overallCode":"OK"`) {
			t.Errorf("%s /json: %d %s, want 200 and the response", m, status, body)
		}
	}
}

// TestHealthcheck: /healthcheck answers any method as the reference's
// does: 200 "OK" while serving, 500 with no body once stopping.
func TestHealthcheck(t *testing.T) {
	var serving atomic.Bool
	h := httpHandler(nil, &serving)
	serving.Store(true)
	for _, m := range []string{http.MethodGet, http.MethodPost} {
		if status, body := do(t, h, m, "/healthcheck", ""); status != http.StatusOK || body != "OK" {
			t.Fatalf("%s while serving: %d %q, want 200 \"OK\"", m, status, body)
		}
	}
	serving.Store(false)
	if status, body := do(t, h, http.MethodGet, "/healthcheck", ""); status != http.StatusInternalServerError || body != "" {
		t.Fatalf("stopping: %d %q, want 500 and no body", status, body)
	}
}

func TestRLConfigShowsReloadError(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "mine.yaml")
	write(t, path, perDay("2"))
	svc, _ := testService(t, dir)
	h := debugHandler(svc)
	const line = "mine.user: unit=DAY requests_per_unit=2, shadow_mode: false, quota_mode: false\n"
	if status, body := do(t, h, http.MethodGet, "/rlconfig", ""); status != http.StatusOK || body != line {
		t.Fatalf("/rlconfig: %d %q, want %q", status, body, line)
	}
	write(t, path, perDay("two"))
	svc.poll()
	_, body := do(t, h, http.MethodGet, "/rlconfig", "")
	if !strings.HasPrefix(body, line) || !strings.Contains(body, path+":4:") {
		t.Fatalf("/rlconfig after an invalid edit does not show the config in force and the error at %s:4:\n%s", path, body)
	}
	if status, body := do(t, h, http.MethodGet, "/debug/pprof/", ""); status != http.StatusOK || !strings.Contains(body, "goroutine") {
		t.Fatalf("/debug/pprof/: %d\n%s", status, body)
	}
}
