-- Leaky bucket as a meter (algorithms.LeakyBucket), registered as
-- algorithms.lb.
-- KEYS: the rule's key, a string "<level scaled by period in µs>:<last
--   update in µs>", then its ledger's tail, if any (ledger.lua). A missing
--   key is an empty bucket.
-- ARGV: capacity, rate, period in µs; cost and now come from stack.lua.
-- Reply: status, remaining, retry µs, reset µs, next µs and the state its
-- commit needs; the commit returns the reset after it, the next after it
-- and its token (see lib.lua).
-- The level drains at rate per period.
local function level_as_is(x)
  return x
end

algorithms.lb = function(key, now, cost, capacity, rate, period)
  return meter(key, level_as_is, now, cost, capacity, rate, period)
end

commits.lb = function(key, now, cost, capacity, rate, period, level, last, tail)
  return meter_commit(key, level_as_is, now, cost, capacity, rate, period, level, last, tail)
end

if refunds then
  refunds.lb = function(key, now, at, cost, back, mark, refunded, capacity, rate, period)
    meter_refund(key, level_as_is, now, at, cost, back, mark, refunded, capacity, rate, period)
  end
end
