package keyfunc_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/go-chi/httprate"
	"github.com/seed-bff0c9e1/ratelimit"

	"github.com/seed-bff0c9e1/ratelimit/keyfunc"
)

type userKey struct{}

func TestKeyFuncs(t *testing.T) {
	withUser := request("203.0.113.9:1", "X-API-Key", "secret-token")
	withUser = withUser.WithContext(context.WithValue(withUser.Context(), userKey{}, "alice"))
	form := httptest.NewRequest(http.MethodPost, "/login", strings.NewReader(url.Values{"username": {"bob"}}.Encode()))
	form.Header.Set("Content-Type", "application/x-www-form-urlencoded")

	for _, tc := range []struct {
		name string
		key  keyfunc.KeyFunc
		req  *http.Request
		want string
	}{
		{"header is hashed", keyfunc.Header("x-api-key"), withUser, "930bbdc51b6aed5c2a5678fd6e28dee7"}, // SHA-256, first 16 bytes
		{"context", keyfunc.Context(userKey{}), withUser, "alice"},
		{"form value", keyfunc.FormValue("username"), form, "bob"},
		{"constant", keyfunc.Constant("global"), form, "global"},
		{"join", keyfunc.Join(keyfunc.IP(), keyfunc.Context(userKey{})), withUser, "203.0.113.9|alice"},
		{"join escapes", keyfunc.Join(keyfunc.Constant(`a|b\`), keyfunc.Constant("c")), form, `a\|b\\|c`},
		{"httprate.KeyByEndpoint plugs in", keyfunc.KeyFunc(httprate.KeyByEndpoint), form, "/login"},
	} {
		got, err := tc.key(tc.req)
		if err != nil || got != tc.want {
			t.Errorf("%s: got %q, %v, want %q", tc.name, got, err, tc.want)
		}
	}
}

func TestJoinNeverCollides(t *testing.T) {
	pairs := [][2]string{{"a|b", "c"}, {"a", "b|c"}, {`a\`, "|c"}, {`a\|`, "c"}, {"a", `\|c`}}
	seen := map[string]bool{}
	for _, p := range pairs {
		got, err := keyfunc.Join(keyfunc.Constant(p[0]), keyfunc.Constant(p[1]))(nil)
		if err != nil {
			t.Fatal(err)
		}
		if seen[got] {
			t.Errorf("%q and %q join to %q, like another pair", p[0], p[1], got)
		}
		seen[got] = true
	}
}

func TestMissingKeysAreErrors(t *testing.T) {
	r := request("203.0.113.9:1")
	for name, fn := range map[string]keyfunc.KeyFunc{
		"header":  keyfunc.Header("X-API-Key"),
		"context": keyfunc.Context(userKey{}),
		"form":    keyfunc.FormValue("username"),
		"join":    keyfunc.Join(keyfunc.IP(), keyfunc.Header("X-API-Key")),
	} {
		if got, err := fn(r); !errors.Is(err, keyfunc.ErrNoKey) || got != "" {
			t.Errorf("%s: got %q, %v, want ErrNoKey", name, got, err)
		}
	}
}

// An empty constant is the server's misconfiguration, not the client's
// missing identity: 500, as grpclimit.Constant("") is Internal.
func TestEmptyConstantIsAConfigError(t *testing.T) {
	got, err := keyfunc.Constant("")(request("203.0.113.9:1"))
	if !errors.Is(err, ratelimit.ErrConfig) || errors.Is(err, keyfunc.ErrNoKey) || got != "" {
		t.Errorf("got %q, %v, want ErrConfig and no ErrNoKey", got, err)
	}
}

// A request without a route pattern is the server's misconfiguration (the
// limiter runs before routing), not the client's missing identity.
func TestRouteWithoutPatternIsAConfigError(t *testing.T) {
	got, err := keyfunc.Route()(request("203.0.113.9:1"))
	if !errors.Is(err, ratelimit.ErrConfig) || errors.Is(err, keyfunc.ErrNoKey) || got != "" {
		t.Errorf("got %q, %v, want ErrConfig and no ErrNoKey", got, err)
	}
}

// A context value Context cannot use is an error that names the key's
// type and what was found (nothing, an empty string, a value of another
// type, a Stringer that says nothing or is a nil pointer), never the value
// itself.
func TestContextErrorNamesTheTypeFound(t *testing.T) {
	type userID int64
	for _, tc := range []struct {
		name  string
		value any
		want  string
	}{
		{"no value", nil, "context key keyfunc_test.userKey: no value"},
		{"empty string", "", "context key keyfunc_test.userKey: an empty string"},
		{"another type", userID(987654321), "context key keyfunc_test.userKey: a value of type keyfunc_test.userID, not a string or fmt.Stringer"},
		{"empty Stringer", emptyStringer{}, "context key keyfunc_test.userKey: a value of type keyfunc_test.emptyStringer whose String() is empty"},
		// An authentication middleware's anonymous user: the Stringer's
		// method would dereference nil.
		{"nil Stringer", (*user)(nil), "context key keyfunc_test.userKey: a nil *keyfunc_test.user"},
	} {
		r := request("203.0.113.9:1")
		if tc.value != nil {
			r = r.WithContext(context.WithValue(r.Context(), userKey{}, tc.value))
		}
		got, err := keyfunc.Context(userKey{})(r)
		if !errors.Is(err, keyfunc.ErrNoKey) || got != "" || !strings.HasSuffix(err.Error(), tc.want) || strings.Contains(err.Error(), "987654321") {
			t.Errorf("%s: got %q, %v, want ErrNoKey ending %q", tc.name, got, err, tc.want)
		}
	}
}

type emptyStringer struct{}

// user is a Stringer on a pointer receiver that reads its field.
type user struct{ name string }

func (u *user) String() string { return u.name }

func (emptyStringer) String() string { return "" }

func TestRoute(t *testing.T) {
	capture := func(got *string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			*got, _ = keyfunc.Route()(r)
		})
	}
	var chiGot, muxGot string
	r := chi.NewRouter()
	r.Get("/users/{id}", capture(&chiGot).ServeHTTP)
	r.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/users/42", nil))
	if chiGot != "/users/{id}" {
		t.Errorf("chi: got %q", chiGot)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /items/{id}", capture(&muxGot))
	mux.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/items/7", nil))
	if muxGot != "GET /items/{id}" {
		t.Errorf("ServeMux: got %q", muxGot)
	}
}
