-- GCRA (algorithms.GCRA), registered as algorithms.gc.
-- KEYS: the rule's key, a string "<tat>#<epoch>@<seen>:<refunded>:<until>:
--   <since>:<rate>:<period>": the theoretical arrival time (TAT) in µs,
--   its epoch (absent for none) and seen (ledger.lua), its ledger's three
--   integers ("0:0:0" for none; ledger.lua) and the rate and period in µs
--   it was written under (its plan). Every plan of a rule shares the key.
--   A missing key is a TAT of now.
-- ARGV: rate, period in µs, burst; cost and now come from stack.lua.
-- Reply: status, remaining, retry µs, reset µs, next µs and the state its
-- commit needs; the commit returns the reset after it, the next after it
-- and its token (see lib.lua).
-- With T = period / rate, a cost c is allowed iff
-- max(tat, now) + c*T - now <= burst*T. Multiplied by rate, every term is an
-- integer: debt = (max(tat, now) - now) * rate, need = c * period.

-- gcra_load reads GCRA's state at key: the TAT, its tail (epoch, seen
-- and ledger) and the plan (rate, period) it was written under; nothing
-- for a missing key.
local function gcra_load(key)
  local tat, tail, rate, period = match(get(key) or "", "^(%d+)(#?%d*@?%d*:%d+:%d+:%d+):(%d+):(%d+)$")
  if tat then
    return tonumber(tat), tail, tonumber(rate), tonumber(period)
  end
end

-- gcra_switch decides cost under a plan (rate, period, burst) against a
-- TAT written under another (rate0, period0) (model.gcraSwitch): its lead
-- over now, in the writer's points, is a level that carry carries over,
-- rounded up. What the commit needs: the debt carried over in the new
-- plan's points and a ledger's tail that voids the give-backs of every
-- decision made at or before now, or the tail's seen when later (a clock
-- that stepped back; ledger_switch).
local function gcra_switch(now, cost, period, burst, tat, tail, rate0, period0)
  local lead = max(0, tat - now)
  local status, remaining, retry, next, used = carry(lead * rate0, cost, burst, rate0, period0)
  local _, _, _, _, _, w = ledger_read(tail, now)
  local last = max(now, w or now)
  return status, remaining, retry, lead, next, used * period, ledger_switch(tail, now, last, max(0, tat - last), 1)
end

algorithms.gc = function(key, now, cost, rate, period, burst)
  local tat, tail, rate0, period0 = gcra_load(key)
  if tat and (rate0 ~= rate or period0 ~= period) then
    return gcra_switch(now, cost, period, burst, tat, tail, rate0, period0)
  end
  local base = max(now, tat or now)
  local debt = (base - now) * rate
  local status, remaining, retry = verdict(debt, cost, burst, rate, period)
  return status, remaining, retry, base - now, next_unit(debt, burst, rate, period), debt, tail
end

-- The new TAT is max(tat, now) plus the cost's share, rounded up to 1 µs,
-- stored under the plan it was decided under.
commits.gc = function(key, now, cost, rate, period, burst, debt, tail, _, slot)
  local after = cdiv(debt + cost * period, rate)
  local fresh
  if debt == 0 then
    fresh = slot
  end
  local stamp, refunded, epoch = tat_commit(key, now, after, tail, fresh, format(":%d:%d", rate, period))
  return after, next_unit(after * rate, burst, rate, period), stamp, refunded, epoch
end

if refunds then
  -- A give-back moves the TAT back by what the ledger allows of the
  -- cost's increment less the rest's (model.tatRefund), and keeps the
  -- state's plan: nothing when the plan changed since the decision, nor
  -- into a state written under another plan (model.underPlan) or of
  -- another epoch.
  refunds.gc = function(key, now, at, cost, back, stamp, refunded, epoch, rate, period)
    local tat, tail, rate0, period0 = gcra_load(key)
    if not tat or rate0 ~= rate or period0 ~= period then
      return
    end
    local own = cdiv(cost * period, rate)
    local want = own - cdiv((cost - back) * period, rate)
    local give, kept = ledger_refund(tail, now, nil, at, stamp - at, own, refunded, epoch, want, tat - now, 1, tat)
    if give > 0 then
      call("SET", key, int(tat - give) .. kept .. format(":%d:%d", rate, period), "KEEPTTL")
    end
  end
end
