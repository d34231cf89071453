-- Token bucket (algorithms.TokenBucket), registered as algorithms.tb.
-- KEYS: the rule's key, a string "<missing tokens scaled by period in
--   µs>:<last update in µs>:<capacity>:<rate>:<period in µs>" (meter.lua),
--   then its tail (epoch and ledger), if any (ledger.lua). A missing
--   key is a full bucket.
-- ARGV: capacity, rate, period in µs; cost and now come from stack.lua.
-- Reply: status, remaining, retry µs, reset µs, next µs and the state its
-- commit needs; the commit returns the reset after it, the next after it
-- and its token (see lib.lua).
-- Tokens refill at rate per period; missing tokens are a meter's level.
algorithms.tb, commits.tb = meter, meter_commit
if refunds then
  refunds.tb = meter_refund
end
