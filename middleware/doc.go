// Package middleware is rate-limiting HTTP middleware backed by Redis:
// func(http.Handler) http.Handler values that work with net/http's ServeMux,
// chi (r.Use, r.With, groups) and any router of that shape.
//
// One middleware holds one or more rules (per-IP, per-user, global...). For
// each request it extracts every rule's identity with the rule's KeyFunc and
// decides all of them in one Redis round trip, all-or-nothing (see package
// limiter). Nested middlewares on one route are independent decisions.
//
// Under the limit, the rate-limit headers are set (package headers) and the
// next handler runs. Over it, the client gets 429 Too Many Requests with
// Retry-After and a short body: plain text, or an RFC 9457
// application/problem+json document naming the violated rules when the
// client accepts JSON. WithDenyHandler replaces that response (the headers,
// Retry-After included, are set before it runs).
//
// The constructors go from short to complete, each adding one idea:
// LimitByIP(rdb, 100, time.Minute) limits by client IP; New(rdb, rules)
// takes a stack of Rules; NewWithLimiter(lim, rules) runs them on a
// limiter of your own (another store, a key prefix, a fallback store).
//
// Two ways leave limiting out: WithExempt (ExemptIPs builds one) takes
// whole requests out; a Rule's Skip leaves one rule out of a request. A
// Rule's Optional is about identities: a request without one sits that
// rule out instead of being rejected.
//
// # Requests in flight
//
// A concurrency limit (algorithms.Concurrency) gets a slot back when a
// request ends, which the server cannot know in advance: the limiter's
// wait, until enough of the oldest slots expire, is only the latest a
// slot frees up. A refusal by one therefore sends Retry-After: 1 (see
// WithConcurrencyRetryAfter), and the rule's RateLimit t says the same.
// X-RateLimit-Reset keeps its meaning, the instant the rule's quota is
// back in full, which for slots is when every slot now held has
// expired, at the latest: a 30 s TTL puts it up to 30 s away. It is not
// a time to retry; a client that waits for the longer of Retry-After and
// X-RateLimit-Reset (client.Transport does) waits for the slot's TTL to
// run out.
//
// A slot is released by guard.Guard.Finish when the request ends. A
// release that failed at the network (a failed dial, a timeout, a
// connection lost in use) is sent again in the background until it
// succeeds or the slot's TTL has passed (see limiter.Limiter.Settle; the
// Limiter's Close sends what is pending one last time): a release is
// idempotent, and sent twice it gives back once. A process that dies
// releases nothing: its slots are held until the TTL. Choose a TTL a
// little longer than the slowest request, a minute rather than an hour.
//
// # Trust model
//
// Identities come from the request and are hostile: they are hashed when
// long or odd and can never collide or steer keys (package limiter). Client
// IPs come from the TCP peer unless you configure trusted proxies (package
// keyfunc). A key function that finds no identity never yields a shared
// empty bucket: the request is rejected (401 by default), unless the rule
// has an AltIdentity or is Optional.
//
// # Failure
//
// Each Redis call is bounded by the store's timeout (100 ms by default:
// give NewWithLimiter a limiter on a redisstore.New with
// redisstore.WithTimeout to change it). When Redis fails or times out, the
// request goes through without rate-limit headers (an outage of Redis does
// not become an outage of the service), or, with WithFailClosed, is
// answered 503 Service Unavailable with Retry-After: 1. Either way the
// error goes to the error handler (slog by default), never to the client.
// A limiter with limiter.WithFallback instead decides with an in-process
// store while Redis is away.
//
// A client that hangs up while its request is decided cancels the
// decision, as does a request context's deadline that passes meanwhile
// (http.TimeoutHandler's, say); that is not a failure of Redis. The
// request is neither served (whatever the policy: its client is gone or
// has given up; it is answered 503, which nobody reads) nor logged, and
// the hook sees Event.Err context.Canceled or context.DeadlineExceeded,
// which the metrics modules count as the outcome canceled, not as a
// backend error.
package middleware
