package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/pprof"
	"sync/atomic"

	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
)

// maxJSONBody bounds a /json request's body.
const maxJSONBody = 1 << 20

// httpHandler serves the reference's HTTP port (HOST, PORT), both paths
// to any method, as the reference does: /healthcheck, 200 with body "OK"
// while serving and 500 with no body once stopping; and /json, a
// RateLimitRequest as JSON (protojson) in the body, answered with the
// RateLimitResponse as JSON: 200 when OK, 429 when OVER_LIMIT, 400 for a
// body that is not a request or a request the service refuses.
func httpHandler(svc rlsv3.RateLimitServiceServer, serving *atomic.Bool) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthcheck", func(w http.ResponseWriter, r *http.Request) {
		if !serving.Load() {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		_, _ = io.WriteString(w, "OK")
	})
	mux.HandleFunc("/json", func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxJSONBody))
		if err != nil {
			http.Error(w, "ratelimit: reading the body: "+err.Error(), http.StatusBadRequest)
			return
		}
		var req rlsv3.RateLimitRequest
		if err := protojson.Unmarshal(body, &req); err != nil {
			http.Error(w, "ratelimit: the body is not a RateLimitRequest in JSON: "+err.Error(), http.StatusBadRequest)
			return
		}
		res, err := svc.ShouldRateLimit(r.Context(), &req)
		if err != nil {
			st := status.Convert(err)
			http.Error(w, st.Message(), httpStatus(st.Code()))
			return
		}
		out, err := protojson.Marshal(res)
		if err != nil {
			http.Error(w, "ratelimit: encoding the response: "+err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if res.GetOverallCode() == rlsv3.RateLimitResponse_OVER_LIMIT {
			w.WriteHeader(http.StatusTooManyRequests)
		}
		_, _ = w.Write(out)
	})
	return mux
}

// httpStatus is the HTTP status of a failed call's gRPC code.
func httpStatus(c codes.Code) int {
	switch c {
	case codes.InvalidArgument:
		return http.StatusBadRequest
	case codes.Unavailable:
		return http.StatusServiceUnavailable
	case codes.DeadlineExceeded:
		return http.StatusGatewayTimeout
	}
	return http.StatusInternalServerError
}

// debugHandler serves the reference's debug port (DEBUG_HOST,
// DEBUG_PORT): /rlconfig, each configured limit as the reference prints
// it (see rls.Dump), or the rules file's rules as config.Check prints
// them, followed by the last reload's error while the configuration in
// force is an older one; the Prometheus series at
// /metrics; and the runtime profiles under /debug/pprof/.
func debugHandler(svc *service) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /rlconfig", func(w http.ResponseWriter, r *http.Request) {
		text, err := svc.rlconfig()
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(w, text)
		if err != nil {
			fmt.Fprintf(w, "\nthe last reload failed; the configuration above stays in force:\n%v\n", err)
		}
	})
	if svc.metrics != nil {
		mux.Handle("GET /metrics", promhttp.HandlerFor(svc.metrics, promhttp.HandlerOpts{}))
	}
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return mux
}
