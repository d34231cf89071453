package keyfunc

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"mime"
	"net/http"
	"reflect"

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
// A form body of more than 64 KiB is not parsed: the limiter decides
// before the handler runs, and a client must not make the server take in
// an upload of any size (multipart files go to disk) before it is
// limited. Such a body is not read when its Content-Length says its size,
// and else read up to 64 KiB and a byte, and put back; the handler reads
// it whole, under the limit an http.MaxBytesReader set on it, if any. The
// request is keyed by the query's field alone, else has no identity, and
// is told why. An empty name is the server's misconfiguration: an error
// wrapping ratelimit.ErrConfig.
func FormValue(name string) KeyFunc {
	if name == "" {
		return misconfigured(fmt.Errorf("%w: keyfunc.FormValue: empty field name", ratelimit.ErrConfig))
	}
	return func(r *http.Request) (string, error) {
		if why := unparsedForm(r); why != "" {
			if v := r.URL.Query().Get(name); v != "" {
				return v, nil
			}
			return "", &missing{"form field " + name + " (in the query: " + why + ")"}
		}
		if v := r.FormValue(name); v != "" {
			return v, nil
		}
		return "", &missing{"form field " + name}
	}
}

// unparsedForm says why r's form body, one not parsed yet, may not be
// parsed: it is over maxFormBody bytes, or could not be read; "" when it
// may, or r has none. What it reads of the body it puts back.
func unparsedForm(r *http.Request) string {
	const tooLarge = "a form body over 64 KiB is not read"
	if r.Form != nil || r.Body == nil || r.Body == http.NoBody {
		return ""
	}
	switch ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct {
	case "application/x-www-form-urlencoded", "multipart/form-data":
	default:
		return "" // Request.FormValue reads no other body
	}
	if r.ContentLength > maxFormBody {
		return tooLarge
	}
	head, err := io.ReadAll(io.LimitReader(r.Body, maxFormBody+1))
	putBack(r, head)
	switch {
	case err != nil:
		return "the form body could not be read"
	case len(head) > maxFormBody:
		return tooLarge
	}
	return ""
}

// putBack makes r's body read head, what was read of it, again, then the
// rest of it (none when head ended with the body). A body under an
// http.MaxBytesReader stays one, its limit kept beneath:
// Request.ParseForm lifts its own 10 MB cap on such a body only.
func putBack(r *http.Request, head []byte) {
	put := io.ReadCloser(readCloser{io.MultiReader(bytes.NewReader(head), r.Body), r.Body})
	if reflect.TypeOf(r.Body) == maxBytesReader {
		put = http.MaxBytesReader(nil, put, math.MaxInt64)
	}
	r.Body = put
}

// maxBytesReader is the type of the bodies http.MaxBytesReader limits.
var maxBytesReader = reflect.TypeOf(http.MaxBytesReader(nil, http.NoBody, 0))

// readCloser reads a body put back together, and closes the original.
type readCloser struct {
	io.Reader
	io.Closer
}
