-- The meter shared by the token bucket and the leaky bucket; included only
-- in scripts whose stacks use one of them (after verdict.lua and
-- ledger.lua).
-- KEYS: none of its own; meter takes the rule's key. ARGV: none. Reply:
-- meter returns what a decide function returns (see lib.lua).

-- meter is the decision shared by the token bucket and the leaky bucket (a
-- token bucket's missing tokens are a leaky bucket's level). level counts
-- units scaled by period (a unit is `period` level points) and drains `rate`
-- points per microsecond. The key holds
-- "<level>:<last>:<capacity>:<rate>:<period>": the level, the last update
-- in microseconds and the parameters (the plan) they were written under,
-- then its tail (epoch and ledger; ledger.lua), if any. Every plan of
-- a bucket shares the key.

-- meter_load returns the level (before draining), last update and plan
-- (capacity, rate, period) at key and the ledger's tail, or nothing for a
-- missing key.
local function meter_load(key)
  local v = get(key)
  if not v then
    return
  end
  local level, last, size, rate, period, tail = match(v, "^(%d+):(%d+):(%d+):(%d+):(%d+)(.*)$")
  return tonumber(level), tonumber(last), tonumber(size), tonumber(rate), tonumber(period), tail
end

-- late is a wait w on a level that drains from its last update, gap µs
-- after now (0 unless the clock stepped back and found that update in the
-- future: the level does not drain before it), counted from now. Waits of
-- 0 (none) and -1 (never) stay as they are.
local function late(w, gap)
  if w > 0 then
    return w + gap
  end
  return w
end

-- meter_switch decides cost under a plan (size, rate, period) against a
-- state written under another (size0, rate0, period0) (model.switchPlan):
-- the level drains at its own plan's rate until the state is written
-- again, so every wait is counted at that rate, and its units in use,
-- rounded up, carry over. What the commit needs: the level carried over
-- in the new plan's points, the last update and a ledger's tail that voids
-- the give-backs of every decision made at or before it (ledger_switch).
local function meter_switch(now, cost, size, rate, period, level, last, size0, rate0, period0, tail)
  level = min(size0 * period0, level)
  if now > last then
    level, last = drain(level, now - last, rate0), now
  end
  local status, remaining, retry, next, used = carry(level, cost, size, rate0, period0)
  local gap = last - now
  return status, remaining, late(retry, gap), late(cdiv(level, rate0), gap), late(next, gap), used * period, last, ledger_switch(tail, now, last, level, rate0)
end

local function meter(key, now, cost, size, rate, period)
  local level, last, size0, rate0, period0, tail = meter_load(key)
  if not level then
    level, last = 0, now
  elseif size0 ~= size or rate0 ~= rate or period0 ~= period then
    return meter_switch(now, cost, size, rate, period, level, last, size0, rate0, period0, tail)
  else
    level = min(size * period, level)
  end
  if now > last then
    level, last = drain(level, now - last, rate), now
  end
  local status, remaining, retry = verdict(level, cost, size, rate, period)
  local gap = last - now
  return status, remaining, late(retry, gap), late(cdiv(level, rate), gap), late(next_unit(level, size, rate, period), gap), level, last, tail
end

-- meter_commit stores the level an admitted cost raises, under the plan it
-- was decided under; its token's stamp is that level. The key lives until
-- the level has drained from its last update, which is after now when the
-- clock stepped back (state stamped in the future).
local function meter_commit(key, now, cost, size, rate, period, level, last, tail, slot)
  local fresh
  if level == 0 then
    fresh = slot
  end
  level = level + cost * period
  local after = late(cdiv(level, rate), last - now)
  local kept, ttl, refunded, epoch = ledger_keep(tail, now, after, fresh)
  put(key, format("%d:%d:%d:%d:%d", level, last, size, rate, period) .. kept, ttl_ms(ttl))
  return after, late(next_unit(level, size, rate, period), last - now), level, refunded, epoch
end

-- meter_refund lowers the level, drained to now, by what the ledger allows
-- of back units, for a decision at `at` with token (stamp, refunded, epoch)
-- under a plan (size, rate, period): nothing when the state's plan changed
-- since (ledger_switch), nor into a state written under another plan
-- (model.underPlan) or of another epoch.
local meter_refund
if refunds then
  meter_refund = function(key, now, at, cost, back, stamp, refunded, epoch, size, rate, period)
    local level, last, size0, rate0, period0, tail = meter_load(key)
    if not level or size0 ~= size or rate0 ~= rate or period0 ~= period then
      return
    end
    level = min(size * period, level)
    if now > last then
      level, last = drain(level, now - last, rate), now
    end
    local give, kept = ledger_refund(tail, now, last, at, stamp, cost * period, refunded, epoch, back * period, level, rate, last + cdiv(level, rate))
    if give > 0 then
      call("SET", key, format("%d:%d:%d:%d:%d", level - give, last, size, rate, period) .. kept, "KEEPTTL")
    end
  end
end
