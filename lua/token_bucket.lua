-- Token bucket (algorithms.TokenBucket), registered as algorithms.tb.
-- KEYS: the rule's key, a string "<tokens scaled by period in µs>:<last
--   update in µs>", then its ledger's tail, if any (ledger.lua). A missing
--   key is a full bucket.
-- ARGV: capacity, rate, period in µs; cost and now come from stack.lua.
-- Reply: status, remaining, retry µs, reset µs, next µs and the state its
-- commit needs; the commit returns the reset after it, the next after it
-- and its token (see lib.lua).
-- Tokens refill at rate per period; missing tokens are a meter's level.
local function tokens_to_level(x, cap)
  return cap - x
end

algorithms.tb = function(key, now, cost, capacity, rate, period)
  return meter(key, tokens_to_level, now, cost, capacity, rate, period)
end

commits.tb = function(key, now, cost, capacity, rate, period, level, last, tail)
  return meter_commit(key, tokens_to_level, now, cost, capacity, rate, period, level, last, tail)
end

if refunds then
  refunds.tb = function(key, now, at, cost, back, mark, refunded, capacity, rate, period)
    meter_refund(key, tokens_to_level, now, at, cost, back, mark, refunded, capacity, rate, period)
  end
end
