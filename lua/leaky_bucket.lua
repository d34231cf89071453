-- Leaky bucket as a meter (algorithms.LeakyBucket), registered as
-- algorithms.lb.
-- KEYS: the rule's key, a string "<level scaled by period in µs>:<last
--   update in µs>:<capacity>:<rate>:<period in µs>" (meter.lua), then its
--   tail (epoch and ledger), if any (ledger.lua). A missing key is an
--   empty bucket.
-- ARGV: capacity, rate, period in µs; cost and now come from stack.lua.
-- Reply: status, remaining, retry µs, reset µs, next µs and the state its
-- commit needs; the commit returns the reset after it, the next after it
-- and its token (see lib.lua).
-- The level drains at rate per period.
algorithms.lb, commits.lb = meter, meter_commit
if refunds then
  refunds.lb = meter_refund
end
