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
