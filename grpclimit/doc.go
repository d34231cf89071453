// Package grpclimit rate-limits gRPC services on the request layer of
// package guard, the one under the HTTP middleware too, and is the client
// side that obeys them. It is a module of its own, so that services
// without gRPC never download it.
//
// # Server
//
// New returns a Server whose UnaryServerInterceptor and
// StreamServerInterceptor decide a stack of Rules per call, in one round
// trip, all-or-nothing, on a store (redisstore.New, or memstore.New) with
// a limiter of its own, which Server.Close closes:
//
//	rules := []grpclimit.Rule{
//		{Rule: limiter.Rule{Name: "per-key", Algorithm: algorithms.GCRA{Rate: 10, Period: time.Second, Burst: 20}},
//			Identity: grpclimit.Metadata("x-api-key")},
//		{Rule: limiter.Rule{Name: "streams", Algorithm: algorithms.Concurrency{Limit: 4, TTL: time.Minute}},
//			Identity: grpclimit.Peer()},
//	}
//	s, err := grpclimit.New(store, rules, grpclimit.WithMethods("streams", "/chat.Chat/Subscribe"))
//	defer s.Close()
//
// NewWithLimiter runs on a limiter of your own (limiter options, or one
// limiter shared with an HTTP middleware), built on guard.Limits(rules).
//
// A Rule is guard.Rule of a Call: a limiter.Rule (name, algorithm,
// blocks, lease, shadow), embedded, and Identity, AltIdentity, Optional, Plan,
// Cost, Skip and Settle, functions of the Call, which has the call's
// context, full method, peer and incoming metadata. The keys read a call:
// Peer keys by the TCP peer, as keyfunc.IP keys HTTP requests; ClientIP,
// with a gateway's address among TrustedProxies ("unix" for a sidecar on a
// Unix socket), reads the forwarded,
// x-forwarded-for or x-real-ip metadata such a gateway sets (grpc-gateway,
// Envoy), from that peer only, as keyfunc.ClientIP reads the headers (name
// the one the gateway sets in IPConfig.Header, or a client can choose its
// identity with another it passes through);
// Metadata("x-api-key") hashes a metadata value as keyfunc.Header hashes
// a header (a binary "-bin" value from its bytes), so that one API key is
// one identity on both doors; Method keys by the full method; Constant is
// one shared limit; Key adapts a function of the call's context and full
// method. A call without the identity a rule reads is told which one is
// missing.
//
// A rule limits every call the Server sees, unless WithMethods names its
// methods ("/pkg.Service/Method", or "/pkg.Service/*" for a service);
// WithMessageCost also charges the rule for each message a stream
// receives. The layer's behaviour is the same as under the middleware:
// costs, plans, Settle after the call (its guard.End has the call's code
// as Status), blocks, leases, the failure policy, shadow rules
// (limiter.Rule.Shadow), shadow mode and the hook (WithHook), whose
// guard.Event prommetrics and otelhook read with the full method as the
// route.
//
// Health checks and server reflection are not limited
// (DefaultExemptMethods): WithExemptMethods adds methods to them, and
// WithoutDefaultExemptions limits them too.
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
// shortened, as the middleware's Retry-After is, see
// WithConcurrencyRetryAfter), and google.rpc.QuotaFailure, one violation
// per rule that refused, its subject the rule's name. A call without an
// identity for a rule that is not Optional is refused with
// codes.Unauthenticated, its message naming the metadata the rule reads
// ("rate limit per-key needs metadata x-api-key"), never a value; a
// negative cost with codes.InvalidArgument; a call the server cannot
// decide (an invalid Plan, a key that reports ratelimit.ErrConfig) with
// codes.Internal, the error going to the error handler.
//
// On Redis, a client refused once is refused again from the limiter's
// deny cache until its wait is over, without a round trip (see
// limiter.WithDenyCache). Such a refusal's metadata lists every rule of
// the stack too, the rules it did not ask as the refusal it repeats found
// them; its RetryInfo is a lower bound when another rule of the stack ran
// out since, and the client's first call after that wait is decided by
// Redis, which gives the real one.
//
// # Failure
//
// A call the limiter failed to decide goes through without the ratelimit
// metadata, or, with WithFailClosed, is refused with codes.Unavailable
// and a RetryInfo of 1 s. A status never carries an error's text: the
// error goes to the error handler (WithErrorHandler) and the hook. A
// client that cancels while its call is decided gets codes.Canceled, and
// one whose deadline passes meanwhile codes.DeadlineExceeded: neither is a
// failure of Redis, and neither goes to the error handler.
//
// # Streams
//
// A stream is decided once, when it opens, at its Cost. A concurrency
// limit (algorithms.Concurrency) holds the stream's slot until its
// handler returns: at most Limit open streams per identity, the slot
// back when the stream ends, the client cancels or its connection goes
// (the handler's stream context ends; a handler that ignores it keeps its
// slot until the slot's TTL). A release that failed at the network (a
// failed dial, a timeout, a connection lost in use) is sent again in the
// background until it succeeds or the TTL has passed (see
// limiter.Limiter.Settle): a release is idempotent, and sent twice it
// gives back once. A process that dies releases nothing: its slots are
// held for the whole TTL, so keep the TTL near the longest stream, a
// minute rather than an hour. A rule given WithMessageCost also charges
// each message the stream receives.
//
// # Client
//
// Client's interceptors obey what a server says, as client.Transport
// does for HTTP (they drive a client.Pacer, its pacing without HTTP):
// they pace calls by the ratelimit metadata, per target and rule (the
// policies it names), so that a client within its quota is not refused,
// whichever methods a rule spans, and retry a call refused with a
// RetryInfo once its wait, as given, has passed, within MaxWait and the
// call's deadline.
package grpclimit
