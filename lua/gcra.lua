-- GCRA (algorithms.GCRA), registered as algorithms.gc.
-- KEYS: the rule's key, a string: the theoretical arrival time (TAT) in µs,
--   then its ledger's tail, if any (ledger.lua). A missing key is a TAT of
--   now.
-- ARGV: rate, period in µs, burst; cost and now come from stack.lua.
-- Reply: status, remaining, retry µs, reset µs, next µs and the state its
-- commit needs; the commit returns the reset after it, the next after it
-- and its token (see lib.lua).
-- With T = period / rate, a cost c is allowed iff
-- max(tat, now) + c*T - now <= burst*T. Multiplied by rate, every term is an
-- integer: debt = (max(tat, now) - now) * rate, need = c * period.
algorithms.gc = function(key, now, cost, rate, period, burst)
  local tat, tail = tat_load(key)
  local base = max(now, tat or now)
  local debt = (base - now) * rate
  local status, remaining, retry = verdict(debt, cost, burst, rate, period)
  return status, remaining, retry, base - now, next_unit(debt, burst, rate, period), debt, tail
end

-- The new TAT is max(tat, now) plus the cost's share, rounded up to 1 µs.
commits.gc = function(key, now, cost, rate, period, burst, debt, tail)
  local after = cdiv(debt + cost * period, rate)
  local mark, refunded = tat_commit(key, now, after, tail)
  return after, next_unit(after * rate, burst, rate, period), mark, refunded
end

if refunds then
  -- back of cost units take the whole cost's increment less the rest's.
  refunds.gc = function(key, now, at, cost, back, mark, refunded, rate, period)
    local own = cdiv(cost * period, rate)
    tat_refund(key, now, at, mark, refunded, own, own - cdiv((cost - back) * period, rate))
  end
end
