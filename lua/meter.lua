-- The meter shared by the token bucket and the leaky bucket; included only
-- in scripts whose stacks use one of them (after state.lua and
-- verdict.lua).
-- KEYS: none of its own; meter takes the rule's key. ARGV: none. Reply:
-- meter returns what a decide function returns (see lib.lua).

-- meter is the decision shared by the token bucket and the leaky bucket (a
-- token bucket's missing tokens are a leaky bucket's level). level counts
-- units scaled by period (a unit is `period` level points) and drains `rate`
-- points per microsecond. The key holds "<stored>:<last>": the level
-- converted by to_stored (which must be its own inverse) and the last
-- update in microseconds.
local function meter(key, to_stored, now, cost, size, rate, period)
  local cap = size * period
  local level, last = 0, now
  local stored, updated = load_state(key)
  if stored then
    level = min(cap, max(0, to_stored(stored, cap)))
    last = updated
  end
  local elapsed = now - last
  if elapsed > 0 then
    if elapsed >= cdiv(level, rate) then
      level = 0
    else
      level = level - elapsed * rate
    end
    last = now
  end
  local status, remaining, retry = verdict(level, cost, size, rate, period)
  return status, remaining, retry, cdiv(level, rate), next_unit(level, size, rate, period), level, last
end

-- meter_commit stores the level an admitted cost raises.
local function meter_commit(key, to_stored, cost, size, rate, period, level, last)
  level = level + cost * period
  local after = cdiv(level, rate)
  store(key, after, "%d:%d", to_stored(level, size * period), last)
  return after, 0, next_unit(level, size, rate, period)
end

-- meter_refund lowers the stored level by what a cost added. The level
-- drains linearly until empty, so taking the cost off the current level is
-- exact: either both levels are still positive, or both are empty.
local meter_refund
if refunds then
  meter_refund = function(key, to_stored, cost, size, period)
    local cap = size * period
    local stored, last = load_state(key)
    if stored then
      local level = min(cap, max(0, to_stored(stored, cap)))
      restore(key, "%d:%d", to_stored(max(0, level - cost * period), cap), last)
    end
  end
end
