package middleware

import (
	"bufio"
	"net"
	"net/http"
)

// recorder notes a response's status and body size for rules that settle
// their cost after it. It forwards Flush and Hijack and unwraps for
// http.ResponseController, so streaming handlers and handlers that take
// the connection over (WebSockets) keep working.
type recorder struct {
	http.ResponseWriter
	status  int
	written int64
}

func (r *recorder) WriteHeader(status int) {
	if r.status == 0 && status >= 200 {
		r.status = status
	}
	r.ResponseWriter.WriteHeader(status)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	n, err := r.ResponseWriter.Write(b)
	r.written += int64(n)
	return n, err
}

// Flush forwards to the ResponseWriter when it flushes.
func (r *recorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		if r.status == 0 {
			r.status = http.StatusOK
		}
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the ResponseWriter.
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// Hijack forwards to the ResponseWriter, or to the first one it wraps
// that can be hijacked: handlers that assert http.Hijacker (WebSocket
// libraries do) find it. It fails with an error wrapping
// http.ErrNotSupported when none can.
func (r *recorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return http.NewResponseController(r.ResponseWriter).Hijack()
}
