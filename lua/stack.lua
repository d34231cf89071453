-- Decides a stack of rules in one run, all-or-nothing: every rule is
-- checked first, and state is written only if every rule allows (shadow
-- rules aside: see allowed below).
-- KEYS[i], i <= n: the state key of rule i, for the n rules of ARGV; then
--   the block key of each rule that takes blocks, in rule order.
-- ARGV[1]: now in µs since the Unix epoch, or "" to read the server's TIME.
-- ARGV[2]: the shortest TTL in ms a written key gets (normally 1; longer
--   when a passed-in clock may run slower than the server's).
-- ARGV[ARGS_HEAD + 1 + ARGS_PER_RULE*(i-1) ...]: rule i as
--   "<code>:<p1>:<p2>:<p3>" (its algorithm code, fw, sl, sw, tb, lb, gc,
--   qu or cc, and its three integer parameters; see rule in lib.lua), the
--   request's cost for it (or, for a leased rule, "<cost>:<lease>": the
--   cost and the most units to take beyond it; for a shadow rule,
--   "<cost>:shadow"; see decide_rule), its
--   penalty: "" when the rule takes no
--   blocks, else the µs a denial of this rule blocks the client for (0:
--   none), and its slot: the decision's id, a positive integer below 2^53
--   that names the units a sliding log or a concurrency limit writes, so
--   that refunding them twice gives back once, and the state a bucket,
--   GCRA or a queue writes fresh, its epoch (ledger.lua) ("" or 0:
--   none; the windows ignore it).
-- Reply: {allowed, now (REPLY_HEAD values), then per rule (REPLY_PER_RULE
--   values): status, remaining, retry, reset, next, stamp, refunded, lease,
--   epoch}. The
--   layout constants come from the Go package that assembles the script.
--   allowed is 1 when every rule allowed (and their state was written),
--   else 0 (and nothing was written); a shadow rule is left out of it, and
--   its state is written only when allowed is 1 and it allowed too (its
--   denial writes no block). now is the time decided at, in µs.
--   status is 1 allowed, 0 denied, -1 cost above what the rule can ever
--   admit (retry is then -1), -2 blocked (by Block, or by the penalty of
--   this denial). For an allowed rule retry is its delay (a queue's wait
--   for the request's turn; 0 for the other algorithms). remaining counts
--   after this request. retry, reset and next (until one more unit is
--   available, 0 when none is used) are in µs (Go rounds them up to whole
--   milliseconds). stamp, refunded and epoch are the rule's token, what
--   refund.lua needs to give its commit back (0 when not written; a
--   sliding log's or a concurrency limit's stamp is its slot; epoch is a
--   draining rule's state's epoch, ledger.lua); lease is the
--   units taken beyond the cost (0 unless the rule is leased), which
--   remaining and the token count in.
-- The stack's code is decide_stack (decide.lua).
local now, err = clock()
if not now then
  return err
end
local reply, bad = decide_stack(now, 0, ARGS_HEAD, (#ARGV - ARGS_HEAD) / ARGS_PER_RULE)
return reply or bad
