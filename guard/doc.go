// Package guard is the request layer under every door: the HTTP
// middleware (package middleware) and the gRPC interceptors (module
// grpclimit) decide their requests here, and only render the result.
//
// A Rule[R] is one limit for requests of type R: a limiter.Rule (name,
// algorithm, blocks, lease, shadow), embedded, and the functions that
// read it from a request: Identity and AltIdentity, Optional, Plan, Cost,
// Skip, and Settle (the final cost once the request has ended).
// middleware.Rule is Rule[*http.Request]; grpclimit.Rule is a Rule of a
// gRPC call. Limits gives the limiter.Rules behind a door's rules, which
// the door's limiter must have.
//
// A Guard decides a door's rules on a limiter.Limiter. Decide applies, in
// order, the exemptions, each rule's identity, cost and plan, one stacked
// decision (all-or-nothing, one round trip), the failure policy, shadow
// mode, and a queue's wait; it returns a Result whose Outcome says what
// the door does: Admitted, Refused, NoIdentity (the client sent too
// little), BadCost, Failed (the backend, failing closed), Misconfigured
// (the server cannot decide: an invalid Plan, a key that reports
// ratelimit.ErrConfig) or Canceled (the client went away). The Result's
// Decision carries the waits a door advertises, a concurrency limit's
// shortened to Config.SlotRetry. Finish settles an admitted request once
// it has ended: its concurrency slots released, the rules with Settle
// charged their final cost; a Result is settled once, however often
// Finish is called.
//
// Every decision and failure reaches Config.Hook as an Event, with its
// outcome, the cause of a backend failure (limiter.Cause) and the
// backend's state (Backend); prommetrics and otelhook read it, whichever
// door reported it. The layer imports neither net/http nor gRPC nor
// go-redis.
//
// # Logs
//
// Without Config.OnError, failures are logged with slog.Default(), naming
// the route (Config.Route) and never an identity or a raw path: a backend
// failure (or an invalid Plan) at Error, at most one line per cause
// (limiter.Cause) a minute, a timeout's line naming
// redisstore.WithTimeout, which sets it; a request without an identity at
// Warn, and a key the server cannot compute (ratelimit.ErrConfig) at
// Error, each at most one line per rule a minute; a bad cost, the
// client's error, at Debug; a decision skipped while the backend is
// marked down (limiter.ErrUnavailable) not at all, since the limiter logs
// when it goes down and comes back. A line after lines left out counts them
// ("suppressed"). A shadow rule's would-be refusals are logged at Info,
// at most one line per rule a minute, whatever OnError is.
package guard
