// Package grpclimit rate-limits gRPC services with the rules of package
// middleware, and is the client side that obeys them. It is a module of
// its own, so that services without gRPC never download it.
//
// # Server
//
// New returns a Server whose UnaryServerInterceptor and
// StreamServerInterceptor decide a stack of Rules per call, in one round
// trip, all-or-nothing, on a limiter.Limiter (Redis, or the memstore):
//
//	rules := []grpclimit.Rule{
//		{Name: "per-key", Key: keyfunc.Header("x-api-key"),
//			Algorithm: algorithms.GCRA{Rate: 10, Period: time.Second, Burst: 20}},
//		{Name: "streams", Methods: []string{"/chat.Chat/Subscribe"}, Key: keyfunc.IP(),
//			Algorithm: algorithms.Concurrency{Limit: 4, TTL: time.Minute}},
//	}
//	lim, err := limiter.New(store, grpclimit.LimiterRules(rules))
//	s, err := grpclimit.New(lim, rules)
//
// A Server is the middleware of package middleware run on a request view
// of each call: a POST of the full method (the URL path and the
// Request.Pattern, which keyfunc.Route returns), from the peer's address
// (RemoteAddr), with the call's incoming metadata as header fields and
// the call's context. Every key function of package keyfunc works on it:
// keyfunc.IP() keys by peer; keyfunc.ClientIP with a gateway's address
// among TrustedProxies reads the x-forwarded-for or forwarded metadata
// such a gateway sets (grpc-gateway, Envoy), from that peer only;
// keyfunc.Header("x-api-key") hashes a metadata value before it leaves
// the process; keyfunc.Constant is one shared limit; Key adapts a
// function of the call's context. The middleware's semantics carry over:
// costs, plans, Settle after the call, blocks, leases, the failure policy,
// shadow rules (Rule.Shadow), shadow mode and its hook (WithHook), which prommetrics and otelhook
// read with the full method as the route.
//
// Health checks and server reflection are not limited
// (DefaultExemptMethods; see WithExemptMethods).
//
// # On the wire
//
// Every decided call, admitted or refused, carries the IETF draft's
// RateLimit and RateLimit-Policy fields (see package headers) as response
// header metadata, "ratelimit" and "ratelimit-policy" (a refused stream's
// in its trailer metadata: see StreamServerInterceptor). A call over a limit
// is refused with codes.ResourceExhausted and two details:
// google.rpc.RetryInfo, the decision's wait rounded up to the millisecond,
// never zero (left out when the call's cost exceeds what a rule can ever
// admit, so that no client retries it; a concurrency limit's is
// shortened as the middleware shortens its Retry-After, see
// WithConcurrencyRetryAfter), and google.rpc.QuotaFailure, one violation
// per rule that refused, its subject the rule's name. A call without an
// identity for a rule that is not Optional is refused with
// codes.Unauthenticated; a negative cost with codes.InvalidArgument.
//
// # Failure
//
// A call the limiter failed to decide goes through without the ratelimit
// metadata, or, with WithFailClosed, is refused with codes.Unavailable
// and a RetryInfo of 1 s. A status never carries an error's text: the
// error goes to the error handler (WithErrorHandler) and the hook. A
// client that cancels while its call is decided gets codes.Canceled.
//
// # Streams
//
// A stream is decided once, when it opens, at its Cost. A concurrency
// limit (algorithms.Concurrency) holds the stream's slot until its
// handler returns: at most Limit open streams per identity, the slot
// back when the stream ends, the client cancels or its connection goes
// (the handler's stream context ends; a handler that ignores it keeps its
// slot until the slot's TTL). A release that failed before it reached
// Redis (a failed dial) is sent again in the background until it succeeds
// or the TTL has passed (see limiter.Limiter.Settle); one that may have
// run (a timeout, a connection lost in use) is not, and a process that
// dies releases nothing: those slots are held for the whole TTL. So the
// TTL is the longest a stream may stay open and no longer: a minute in
// the example above, not an hour (a stream that outlives its TTL loses
// its slot to another). A Rule's MessageCost also charges each message
// the stream receives.
//
// # Client
//
// Client's interceptors obey what a server says, as client.Transport
// does for HTTP (they drive one): they pace calls by the ratelimit
// metadata so that a client within its quota is not refused, and retry a
// call refused with a RetryInfo once its wait has passed, within MaxWait
// and the call's deadline.
package grpclimit
