package keyfunc

import (
	"bytes"
	"fmt"
	"io"
	"mime"
	"net/http"

	"github.com/seed-bff0c9e1/ratelimit"
)

// maxFormBody is the largest request body FormValue reads: a login
// form's, with room to spare.
const maxFormBody = 64 << 10

// FormValue returns the named form field, as Request.FormValue finds it
// (the query, and a URL-encoded or multipart form body), which parses and
// keeps the form so the handler can still read it. Meant for login forms:
// key by username.
//
// A form body of more than 64 KiB is not read: the limiter decides before
// the handler runs, and a client must not make the server take in an
// upload of any size (multipart files go to disk) before it is limited.
// Such a request is keyed by the query's field alone, else has no
// identity, and its body is left whole for the handler. An empty name
// is the server's misconfiguration: an error wrapping ratelimit.ErrConfig.
func FormValue(name string) KeyFunc {
	if name == "" {
		return misconfigured(fmt.Errorf("%w: keyfunc.FormValue: empty field name", ratelimit.ErrConfig))
	}
	return func(r *http.Request) (string, error) {
		if !formBodyFits(r) {
			if v := r.URL.Query().Get(name); v != "" {
				return v, nil
			}
			return "", &missing{"form field " + name + " (in the query: a form body over 64 KiB is not read)"}
		}
		if v := r.FormValue(name); v != "" {
			return v, nil
		}
		return "", &missing{"form field " + name}
	}
}

// formBodyFits reports whether r's form, if it has a form body not parsed
// yet, may be parsed: its body is at most maxFormBody bytes. It reads at
// most one byte more, and puts back what it read, so that the body reads
// whole afterwards either way.
func formBodyFits(r *http.Request) bool {
	if r.Form != nil || r.Body == nil || r.Body == http.NoBody {
		return true
	}
	switch ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct {
	case "application/x-www-form-urlencoded", "multipart/form-data":
	default:
		return true // Request.FormValue reads no other body
	}
	head, err := io.ReadAll(io.LimitReader(r.Body, maxFormBody+1))
	rest := io.Reader(bytes.NewReader(head))
	if len(head) > maxFormBody || err != nil {
		rest = io.MultiReader(rest, r.Body)
	}
	r.Body = readCloser{rest, r.Body}
	return len(head) <= maxFormBody && err == nil
}

// readCloser reads a body put back together, and closes the original.
type readCloser struct {
	io.Reader
	io.Closer
}
