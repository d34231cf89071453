-- GCRA (algorithms.GCRA), registered as algorithms.gc.
-- KEYS: the rule's key, a string: the theoretical arrival time (TAT) in µs.
--   A missing key is a TAT of now.
-- ARGV: rate, period in µs, burst; cost and now come from stack.lua.
-- Reply: status, remaining, retry µs, reset µs, next µs and the state its
-- commit needs; the commit returns the reset after it, a refund token and
-- the next after it (see lib.lua).
-- With T = period / rate, a cost c is allowed iff
-- max(tat, now) + c*T - now <= burst*T. Multiplied by rate, every term is an
-- integer: debt = (max(tat, now) - now) * rate, need = c * period.
algorithms.gc = function(key, now, cost, rate, period, burst)
  local base = max(now, tonumber(call("GET", key)) or now)
  local debt = (base - now) * rate
  local status, remaining, retry = verdict(debt, cost, burst, rate, period)
  return status, remaining, retry, base - now, next_unit(debt, burst, rate, period), debt, base
end

-- The new TAT is max(tat, now) plus the cost's share, rounded up to 1 µs.
commits.gc = function(key, now, cost, rate, period, burst, debt, base)
  local after = cdiv(debt + cost * period, rate)
  call("SET", key, int(now + after), "PX", ttl_ms(after))
  return after, now + after - base, next_unit(after * rate, burst, rate, period)
end

if refunds then
  -- token is the commit's TAT increment: moving the TAT back by it undoes
  -- the commit exactly, whatever was admitted after it.
  refunds.gc = function(key, now, cost, token)
    local tat = tonumber(call("GET", key))
    if tat then
      local back = tat - token
      if back > now then
        call("SET", key, int(back), "PX", ttl_ms(back - now))
      else
        call("DEL", key)
      end
    end
  end
end
