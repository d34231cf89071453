-- The meter shared by the token bucket and the leaky bucket; included only
-- in scripts whose stacks use one of them (after state.lua, verdict.lua
-- and ledger.lua).
-- KEYS: none of its own; meter takes the rule's key. ARGV: none. Reply:
-- meter returns what a decide function returns (see lib.lua).

-- meter is the decision shared by the token bucket and the leaky bucket (a
-- token bucket's missing tokens are a leaky bucket's level). level counts
-- units scaled by period (a unit is `period` level points) and drains `rate`
-- points per microsecond. The key holds "<stored>:<last>": the level
-- converted by to_stored (which must be its own inverse) and the last
-- update in microseconds, then its ledger's tail, if any.

-- meter_load returns the level (before draining) and last update at key
-- and the ledger's tail, or nothing for a missing key.
local function meter_load(key, to_stored, cap)
  local v = call("GET", key)
  if not v then
    return
  end
  local stored, last, tail = match(v, "^(%d+):(%d+)(.*)$")
  return min(cap, max(0, to_stored(tonumber(stored), cap))), tonumber(last), tail
end

local function meter(key, to_stored, now, cost, size, rate, period)
  local level, last, tail = meter_load(key, to_stored, size * period)
  if not level then
    level, last = 0, now
  end
  if now > last then
    level, last = drain(level, now - last, rate), now
  end
  local status, remaining, retry = verdict(level, cost, size, rate, period)
  return status, remaining, retry, cdiv(level, rate), next_unit(level, size, rate, period), level, last, tail
end

-- meter_commit stores the level an admitted cost raises; its token's mark
-- is that level.
local function meter_commit(key, to_stored, now, cost, size, rate, period, level, last, tail)
  level = level + cost * period
  local after = cdiv(level, rate)
  local kept, ttl, refunded = ledger_keep(tail, now, after)
  call("SET", key, format("%d:%d", to_stored(level, size * period), last) .. kept, "PX", ttl_ms(ttl))
  return after, next_unit(level, size, rate, period), level, refunded
end

-- meter_refund lowers the level, drained to now, by what the ledger allows
-- of back units, for a decision at `at` with token (mark, refunded).
local meter_refund
if refunds then
  meter_refund = function(key, to_stored, now, at, cost, back, mark, refunded, size, rate, period)
    local cap = size * period
    local level, last, tail = meter_load(key, to_stored, cap)
    if not level then
      return
    end
    if now > last then
      level, last = drain(level, now - last, rate), now
    end
    local give, kept = ledger_give(tail, now, at, mark, cost * period, refunded, back * period, level, rate, now + cdiv(level, rate))
    if give > 0 then
      call("SET", key, format("%d:%d", to_stored(level - give, cap), last) .. kept, "KEEPTTL")
    end
  end
end
