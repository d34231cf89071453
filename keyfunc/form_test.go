package keyfunc_test

import (
	"bytes"
	"errors"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/seed-bff0c9e1/ratelimit/keyfunc"
)

// counting is a request body that counts the bytes read from it.
type counting struct {
	r    io.Reader
	read int
}

func (c *counting) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.read += n
	return n, err
}

// multipartLogin is a multipart/form-data body: a file part of size
// bytes, then the username field.
func multipartLogin(t *testing.T, size int) ([]byte, string) {
	t.Helper()
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	f, err := w.CreateFormFile("avatar", "a.png")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(bytes.Repeat([]byte{'x'}, size)); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteField("username", "bob"); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes(), w.FormDataContentType()
}

// FormValue reads a form body of a login's size, and keeps what it parsed
// for the handler, as Request.FormValue does.
func TestFormValueReadsSmallForms(t *testing.T) {
	body, ct := multipartLogin(t, 1024)
	mp := httptest.NewRequest(http.MethodPost, "/login", bytes.NewReader(body))
	mp.Header.Set("Content-Type", ct)
	enc := httptest.NewRequest(http.MethodPost, "/login", strings.NewReader(url.Values{"username": {"bob"}}.Encode()))
	enc.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for name, r := range map[string]*http.Request{"multipart": mp, "urlencoded": enc} {
		got, err := keyfunc.FormValue("username")(r)
		if err != nil || got != "bob" {
			t.Errorf("%s: got %q, %v, want bob", name, got, err)
		}
		if v := r.PostFormValue("username"); v != "bob" {
			t.Errorf("%s: the handler reads %q from the form, want bob", name, v)
		}
	}
}

// A form body larger than a login's is not read before the limiter
// decides: a client cannot make the server take in (or write to disk) an
// upload of any size before it is limited. Only the query is read, and
// the body is left whole for the handler.
func TestFormValueLeavesLargeBodies(t *testing.T) {
	const size = 8 << 20
	body, ct := multipartLogin(t, size)
	big := url.Values{"pad": {strings.Repeat("x", size)}, "username": {"bob"}}.Encode()
	for _, tc := range []struct {
		name, target, ct string
		body             []byte
		want             string
	}{
		{"multipart", "/login", ct, body, ""},
		{"urlencoded", "/login", "application/x-www-form-urlencoded", []byte(big), ""},
		{"multipart, the query's field", "/login?username=carol", ct, body, "carol"},
	} {
		src := &counting{r: bytes.NewReader(tc.body)}
		r := httptest.NewRequest(http.MethodPost, tc.target, src)
		r.Header.Set("Content-Type", tc.ct)
		got, err := keyfunc.FormValue("username")(r)
		switch {
		case tc.want == "" && (!errors.Is(err, keyfunc.ErrNoKey) || got != "" || !strings.Contains(err.Error(), "over 64 KiB")):
			t.Errorf("%s: got %q, %v, want ErrNoKey saying that the body was not read", tc.name, got, err)
		case tc.want != "" && (err != nil || got != tc.want):
			t.Errorf("%s: got %q, %v, want %q", tc.name, got, err, tc.want)
		}
		if src.read > 1<<20 {
			t.Errorf("%s: %d bytes of the body read to find the identity", tc.name, src.read)
		}
		rest, err := io.ReadAll(r.Body)
		if err != nil || !bytes.Equal(rest, tc.body) {
			t.Errorf("%s: the handler reads %d bytes of the body (%v), want all %d", tc.name, len(rest), err, len(tc.body))
		}
	}
}

// A body over 64 KiB under an http.MaxBytesReader (http.MaxBytesHandler)
// stays under its limit, and stays one: Request.ParseForm lifts its own
// 10 MB cap on such a body only, so the handler parses a 12 MiB form it
// allows, whether or not the body's length was known; and a body over the
// handler's limit still fails it.
func TestFormValueKeepsMaxBytesReader(t *testing.T) {
	body := url.Values{"pad": {strings.Repeat("x", 12<<20)}, "username": {"bob"}}.Encode()
	for _, tc := range []struct {
		name  string
		limit int64
		size  int64 // Content-Length, -1 unknown
		ok    bool
	}{
		{"length known", 64 << 20, int64(len(body)), true},
		{"length unknown", 64 << 20, -1, true},
		{"over the handler's limit", 1 << 20, -1, false},
	} {
		var perr error
		var user string
		h := http.MaxBytesHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if _, err := keyfunc.FormValue("username")(r); !errors.Is(err, keyfunc.ErrNoKey) {
				t.Errorf("%s: keyed %v, want ErrNoKey", tc.name, err)
			}
			perr = r.ParseForm()
			user = r.PostForm.Get("username")
		}), tc.limit)
		r := httptest.NewRequest(http.MethodPost, "/login", strings.NewReader(body))
		r.ContentLength = tc.size
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		h.ServeHTTP(httptest.NewRecorder(), r)
		if ok := perr == nil && user == "bob"; ok != tc.ok {
			t.Errorf("%s: the handler's ParseForm: %v, username %q", tc.name, perr, user)
		}
	}
}

// A body whose Content-Length is over 64 KiB is not read at all.
func TestFormValueReadsNoBodyOfKnownLargeLength(t *testing.T) {
	src := &counting{r: strings.NewReader(strings.Repeat("x", 100<<10))}
	r := httptest.NewRequest(http.MethodPost, "/login", src)
	r.ContentLength = 100 << 10
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if _, err := keyfunc.FormValue("username")(r); !errors.Is(err, keyfunc.ErrNoKey) || src.read != 0 {
		t.Errorf("got %v, %d bytes read, want ErrNoKey and none", err, src.read)
	}
}

// failing is a body that fails once its bytes are read.
type failing struct{ r io.Reader }

func (f failing) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if err == io.EOF {
		err = errors.New("connection reset")
	}
	return n, err
}

// A small body that cannot be read is said to be so, not too large.
func TestFormValueUnreadableBody(t *testing.T) {
	r := httptest.NewRequest(http.MethodPost, "/login", failing{strings.NewReader("username=bob")})
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	_, err := keyfunc.FormValue("username")(r)
	if !errors.Is(err, keyfunc.ErrNoKey) || !strings.Contains(err.Error(), "could not be read") {
		t.Errorf("got %v, want ErrNoKey saying the body could not be read", err)
	}
}
