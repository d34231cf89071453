// Package limiter decides rate limits for any kind of request (HTTP, gRPC,
// job workers) against a Store: Redis (package redisstore), or the
// in-process memstore. Package guard turns requests of a door into its
// checks; the HTTP middleware and the gRPC interceptors are thin layers
// over that.
//
// A Limiter holds named rules. Each call to Decide checks a stack of rules,
// each Check naming its rule, for given identities in one store call (one
// Lua script run on Redis: one round trip), all-or-nothing, so a request
// denied by one rule consumes nothing of the others. Allow is Decide for
// one rule at cost 1. By default the Redis store reads the server's TIME,
// so every app server decides on one clock.
//
// The package holds the decision API and what protects callers from a
// Remote store's failures: the breaker that marks a store down
// (WithRetryInterval, WithFallback) and the deny cache (WithDenyCache).
// Stores implement Store; they know nothing of rules, only of keys.
//
// # Keys
//
// A rule's state for an identity lives under
//
//	<prefix>:{<rule>:<identity>}:<algorithm code>[<parameters>]
//
// (the windows and the log add their window in µs, a concurrency limit its
// TTL: the parameters their stored state depends on,
// ratelimit:{per-ip:203.0.113.9}:sw60000000; the buckets, GCRA and a queue
// have their code and "e", whose state carries an epoch,
// ratelimit:{per-key:…}:tbe). The
// braces are a Redis Cluster hash tag, so one rule and identity always
// map to one slot. Identities are untrusted: one that is empty is an error,
// and one longer than 64 bytes or with a byte outside [A-Za-z0-9._:@/+=-] is
// replaced by "#" and the hex of the first 16 bytes of its SHA-256, so no
// identity can end the hash tag, collide with another, or make a key long.
// Rule names are restricted to [A-Za-z0-9._-].
//
// Limiters that name one rule under one prefix on one state (a memstore,
// or a Redis server or cluster however many clients and processes reach
// it) share that rule's state, built together or one after another.
// Nothing refuses such a pair (other processes cannot be seen). They share
// the keys they have in common: the same algorithm with the same
// parameters in its key shares counts exactly as a plan change does (see
// Plans), which is how the instances of a service share a limit; another
// algorithm, or other parameters in the key, shares no counts. A rule's
// blocks (…}:b) belong to its name, whatever its algorithm: a Block or a
// Penalty through one limiter is honoured by every limiter's Blockable
// rule of that name. The mark a Reset leaves beside a state it forgets
// (…}:r and the state's suffix) belongs to that key: it voids the
// refunds into that state, whichever limiter decided, and nothing else
// (see Limiter.Reset). To keep two limits apart, give them distinct rule
// names or prefixes (WithPrefix).
//
// # Plans
//
// A Check may carry a Plan, an algorithm in place of its rule's: the limit
// of a customer's plan. A client's plans of one rule count into one state
// wherever the new limit can read it: counts in the same window (fixed and
// sliding windows, sliding log, concurrency slots: an upgrade from 2 to 5
// an hour admits 3 more at once, a downgrade admits nothing until the
// counts fall), a bucket's units in use, whatever its capacity, rate or
// period (2 of 2 in use, then a capacity of 5: 3 more), and GCRA's,
// whatever its rate, period or burst (2 of a burst of 2 at 1 an hour in
// use, then 5 an hour with a burst of 5: 3 more). A bucket's or GCRA's
// state records the plan it was written under (a bucket's capacity, rate
// and period; GCRA's rate and period, which say what its debt counts in
// units), and drains at that plan's rate until an admission under another
// plan carries its units in use over, rounded up; so requests that mix
// plans, even at once, are admitted no more than a bucket (a GCRA) of the
// largest capacity (burst) and the largest rate among them would admit
// (the larger plan alone, of a free and a paid one). GCRA state an older
// release wrote, with no plan, reads as written under the plan that reads
// it. A queue's tail is time, when its last turn ends, under any plan:
// turns never overlap and each lasts at least the shortest plan's turn, so
// mixed queue plans admit no more than a queue of the largest rate and the
// longest MaxDelay among them, and Delay stays the real wait for the turn.
// A refund (Settle's, a lease's, a Cluster stack's across slots) of a
// decision made before a bucket's or GCRA's plan last changed,
// or of the decision that changed it, returns nothing: its units were
// counted under another plan (GCRA plans that differ only by their burst
// count alike and refund across each other). A limit with another
// window or TTL keeps its state under other keys and starts afresh,
// since the stored state depends on it: a short window never trims a long
// one's log, and switching back finds the first state as it was. The deny
// cache keys on the limit too, so one plan's denial never answers
// another's request; but an admission under a bucket or GCRA plan with a
// faster rate can bring another plan's wait forward, and a denial of that
// plan cached before then is repeated for at most the deny cache's maxAge
// too long.
// A rule's own algorithm changes the same way: to change a limit at
// runtime, build a Limiter with the new rules under the same names, swap it
// in and Close the old one; clients keep what they used.
//
// # Settlement
//
// Settle gives back what a decision did not use, at most once per
// decision (a second Settle returns ErrSettled; Wait's settlement counts).
// A refund never returns more than a decision of the final cost at the
// original instant would have left, whatever happened in between. The
// windows and the log give back exactly: their counts add up. The rules
// whose state drains (the buckets and GCRA) give back what is left
// of the decision's own share: its level just after the decision, drained
// since, less what decisions made before it gave back since; that is the
// whole difference when the state has not emptied since (a reservation
// settled at the end of a response), and nothing once the bucket has
// refilled past it (10 taken from a bucket of 10, 10 more after it
// refilled, then the first settled at 0: nothing back, and the bucket
// stays empty, since the second 10 were spent). Such a key keeps a
// ledger of its refunds (three integers) from the first refund until
// no decision's share can matter any more. A queue gives back exactly the
// part of the decision's turns still ahead of now, in whatever order its
// clients leave (ten turns of a queue of 10 a second taken at once, those
// of turns 3 to 7 settled at 0 soon after, last first or first first: the
// next turn is 500 ms away); a turn under way gives back its part to
// come, a turn past nothing. Each refund moves the turns after it
// forward, so a queue's ledger also lists the refunds whose turns were
// still ahead at the last one: at most one more than the requests then
// holding turns ahead.
//
// A refund that fails keeps the charge (stricter, never looser), except a
// concurrency limit's slot release: the Limiter sends it again in the
// background until it succeeds or the slot's TTL has passed, and Close
// sends what is pending one last time (see Settle). A release is
// idempotent: each concurrency decision has an id of its own
// (store.Check.Slot) that names its slots, and its release removes those
// slots only, so a release that may have run (a timeout, a connection
// lost in use) is sent again too, and sent twice it gives back once. A
// release without an id (a store that returns none) gives back any slot
// of the decision's instant, and is sent again only when it surely never
// reached the store (a failed dial). A decision whose reply was lost (a
// timeout, a connection lost in use, a caller gone while it was in
// flight) may have taken slots that no request holds: the Limiter
// releases them the same way, by the decision's id with its instant
// unknown (see store.Store.Refund), so one that did not run removes
// nothing, each try twice: the second once the first is answered, by
// when a decision that waited in a busy server with the first has run.
//
// # Leases
//
// A rule with Rule.Lease is leased: a global or per-tenant rule that every
// request of many instances checks stops being one hot key. Each Limiter
// keeps a pool per rule and identity. A request whose pool holds its
// cost spends from it without asking the store (the stack's other rules
// are still decided by the store, and a stack they deny spends nothing:
// the units are restored to the pool). Otherwise the request's check asks
// the store for its cost and a lease with it, in the stack's one store
// call: up to B more units, no more than half of what remains beyond the
// cost (store.Check.LeaseUnits). B is the instance's recent demand over one
// interval I (at least 1, at most the rule's quota), where I is a tenth
// of the lease, and no more than refills half a bucket's capacity (GCRA's
// burst) or a tenth of a window. When a take comes up short (the store
// had less than asked) or the rule denies, the pool asks again no sooner
// than I later (or the rule's RetryAfter, if longer), and denies locally
// until then. A pool whose lease would be left with less than a quarter of
// what it took (a lease of 8 units or more) takes the next one ahead, as
// its spare: requests go on spending the lease in place, to its last
// unit, then the spare, so that none waits for a take. A lease's units
// are spent within its Lease (for the windows, within the window they
// were counted in); what is left is refunded exactly when it expires
// (the Limiter's sweeper, or the next request of the pool), when a take
// replaces it, or on Close: through the same refund as Settle's, once.
// If the process dies, its leased units come back as the rule's state
// recovers. Leasable: the windows, the buckets and GCRA; a sliding log's
// entries, a queue's turns and a concurrency limit's slots are not
// interchangeable units, and a leased rule takes no blocks. With
// WithClock there is no sweeper: a lease ends when a request of its pool
// finds it expired, or on Close.
//
// Bounds. Never over: every unit spent was consumed in the store first,
// so fleet-wide admissions keep the algorithm's promise counting each
// unit at the instant it was leased (for a bucket or GCRA, a unit is
// spent at most Lease after that; a window's units inside their window).
// Under, while demand exceeds the limit: with B_i the most units instance
// i held at once (its largest lease, and beside a spare less than a
// quarter of the lease before plus one request's cost), the fleet admits
// at most
//
//	sum_i B_i + max_i B_i + 1 (+ what refills over I, for a bucket or GCRA)
//
// fewer units than one unleased limiter would (per window for the
// windows): the units in pools when a window ends, what a short take left
// in the store for paced instances, and a bucket's refill during one
// pause. Near exhaustion leases halve down to none, and a leased rule
// decides as an unleased one.
//
// Results. A leased rule's result reports Remaining as what the store had
// left at the pool's last take plus the units still in the pool, and
// ResetAfter and NextAfter from that take, less the time since; a
// Decision served entirely from pools has At on the local (or passed-in)
// clock. A local denial reports RetryAfter until the pool's next take,
// never shorter than the store's wait for the cost from the state the last
// take saw with what the store had left gone too (another instance may
// have taken it): a fixed window's end, a bucket's or GCRA's next unit and
// the refill of the rest. A sliding window's pool that cannot bound the
// wait so (units were left, or a cost beyond one more unit) asks the
// store instead of denying. A stack denied locally by a leased rule is
// not sent to the store: its other rules report Undecided (and Allowed,
// with no Remaining). Settle restores a leased rule's units to its
// pool (refunded to the store with the lease's refund if the lease has
// ended, or nothing if that was done).
//
// # Shadow rules
//
// A rule with Rule.Shadow is decided and counted with its stack, in the
// same store call, but never refuses: to roll a limit out, run it in
// shadow, watch its would-be refusals, then enforce it. The stack's
// verdict (Decision.Allowed, RetryAfter) is over its other rules alone. A
// shadow rule consumes its cost only when the stack is allowed and the
// rule itself allows, so it never takes what an enforced rule needs, and
// an enforced rule's denial leaves it untouched, exactly as if enforced
// rules only had been asked. Its result (RuleResult.Shadow set) reports its
// own verdict: Allowed with its Remaining, or a would-be refusal with its
// RetryAfter, which consumed nothing and writes no block (its Penalty is
// not applied; a block in place, from Block or from when the rule was
// enforced, shows as a would-be refusal). Settle refunds what a shadow
// rule consumed and nothing for a would-be refusal; a shadow Queue rule
// takes its turn but delays nothing (Wait and Hold do not wait for it).
// A shadow rule cannot be leased. A denial the deny cache repeats reports
// its shadow rules Undecided. On Redis Cluster, a stack spanning slots
// keeps shadow rules out of the verdict in each slot's run, and refunds
// a denied stack's shadow consumption with the rest.
package limiter
