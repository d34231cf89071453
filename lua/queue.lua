-- Leaky bucket as a queue (algorithms.Queue), registered as algorithms.qu.
-- KEYS: the rule's key, a string: the queue's tail (when the last admitted
--   request's turn ends) in µs. A missing key is an empty queue.
-- ARGV: rate, period in µs, max delay in µs; cost and now come from
--   stack.lua.
-- Reply: status, remaining, retry µs (for an allowed request, its delay:
-- how long it waits for its turn), reset µs, next µs and the state its
-- commit needs; the commit returns the reset after it, a refund token (the
-- tail's increment), the next after it and the remaining after it.
-- With unit = ceil(period / rate) µs, a request starts at max(tail, now),
-- is allowed iff it starts within max delay, and moves the tail by its
-- cost's share of the period, rounded up to 1 µs.

-- queue_next is the time until one more slot is free within max delay,
-- for a tail wait ahead (0 for an empty queue).
local function queue_next(wait, max_delay, unit)
  if wait <= 0 then
    return 0
  end
  if wait > max_delay then
    return wait - max_delay
  end
  return unit - fmod(max_delay - wait, unit)
end

-- queue_slots is how many unit requests can still start within max delay
-- behind a tail wait ahead.
local function queue_slots(wait, max_delay, unit)
  if wait > max_delay then
    return 0
  end
  return idiv(max_delay - wait, unit) + 1
end

algorithms.qu = function(key, now, cost, rate, period, max_delay)
  local base = max(now, tonumber(call("GET", key)) or now)
  local wait, unit = base - now, cdiv(period, rate)
  local remaining = queue_slots(wait, max_delay, unit)
  local next = queue_next(wait, max_delay, unit)
  if cost > idiv(max_delay, unit) + 1 then
    return -1, remaining, -1, wait, next
  end
  if wait > max_delay then
    return 0, remaining, wait - max_delay, wait, next
  end
  return 1, remaining, wait, wait, next, wait
end

-- Slots are counted from the new tail (a cost's share is rounded to the
-- microsecond, not to whole slots): the commit returns them too.
commits.qu = function(key, now, cost, rate, period, max_delay, wait)
  local inc, unit = cdiv(cost * period, rate), cdiv(period, rate)
  local after = wait + inc
  call("SET", key, int(now + after), "PX", ttl_ms(after))
  return after, inc, queue_next(after, max_delay, unit), queue_slots(after, max_delay, unit)
end

if refunds then
  -- The tail is a TAT, given back as GCRA's (refund scripts hold every
  -- algorithm, gcra.lua included).
  refunds.qu = refunds.gc
end
