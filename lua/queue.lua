-- Leaky bucket as a queue (algorithms.Queue), registered as algorithms.qu.
-- KEYS: the rule's key, a string: the queue's tail (when the last admitted
--   request's turns end) in µs, as a TAT (ledger.lua). A missing key is an
--   empty queue.
-- ARGV: rate, period in µs, max delay in µs; cost and now come from
--   stack.lua.
-- Reply: status, remaining, retry µs (for an allowed request, its delay:
-- how long it waits for its turn), reset µs, next µs and the state its
-- commit needs; the commit returns the reset after it, the next after it
-- and its token (see lib.lua).
-- A unit's turn lasts slot = ceil(period / rate) µs. A request starts at
-- max(tail, now) and takes cost turns; it is allowed iff its last unit's
-- turn starts within max delay, that is iff cost <= remaining, where
-- remaining = floor((max delay - wait) / slot) + 1 (0 when wait > max
-- delay) counts the turns that start within it.

-- queue_next is the time until one more turn starts within max delay,
-- for a tail wait ahead (0 when all of them do already).
local function queue_next(wait, max_delay, slot)
  if wait <= fmod(max_delay, slot) then
    return 0
  end
  if wait > max_delay then
    return wait - max_delay
  end
  return slot - fmod(max_delay - wait, slot)
end

algorithms.qu = function(key, now, cost, rate, period, max_delay)
  local tat, tail = tat_load(key)
  local base = max(now, tat or now)
  local wait, slot = base - now, cdiv(period, rate)
  local remaining = 0
  if wait <= max_delay then
    remaining = idiv(max_delay - wait, slot) + 1
  end
  local next = queue_next(wait, max_delay, slot)
  if cost > idiv(max_delay, slot) + 1 then
    return -1, remaining, -1, wait, next
  end
  if cost > remaining then
    return 0, remaining, wait + (cost - 1) * slot - max_delay, wait, next
  end
  return 1, remaining, wait, wait, next, wait, tail
end

commits.qu = function(key, now, cost, rate, period, max_delay, wait, tail)
  local slot = cdiv(period, rate)
  local after = wait + cost * slot
  local mark, refunded = tat_commit(key, now, after, tail)
  return after, queue_next(after, max_delay, slot), mark, refunded
end

if refunds then
  -- The tail is a TAT; back units are back turns.
  refunds.qu = function(key, now, at, cost, back, mark, refunded, rate, period)
    local slot = cdiv(period, rate)
    tat_refund(key, now, at, mark, refunded, cost * slot, back * slot)
  end
end
