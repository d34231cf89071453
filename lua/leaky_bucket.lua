-- Leaky bucket as a meter (algorithms.LeakyBucket), registered as
-- algorithms.lb.
-- KEYS: the rule's key, a string "<level scaled by period in µs>:<last
--   update in µs>". A missing key is an empty bucket.
-- ARGV: capacity, rate, period in µs; cost and now come from stack.lua.
-- Reply: status, remaining, retry µs, reset µs, next µs and the state its
-- commit needs; the commit returns the reset after it, a refund token and
-- the next after it (see lib.lua).
-- The level drains at rate per period.
local function level_as_is(x)
  return x
end

algorithms.lb = function(key, now, cost, capacity, rate, period)
  return meter(key, level_as_is, now, cost, capacity, rate, period)
end

commits.lb = function(key, now, cost, capacity, rate, period, level, last)
  return meter_commit(key, level_as_is, cost, capacity, rate, period, level, last)
end

if refunds then
  refunds.lb = function(key, now, cost, token, capacity, rate, period)
    meter_refund(key, level_as_is, cost, capacity, period)
  end
end
