-- Sliding window counter (algorithms.SlidingWindow), registered as
-- algorithms.sw.
-- KEYS: the rule's key, a string "<s>:<c>:<p>": the current window's start
--   in µs, its count, and the previous window's count.
-- ARGV: limit, window in µs (p3 unused); cost and now come from stack.lua.
-- Reply: status, remaining, retry µs, reset µs, next µs and the state its
-- commit needs; the commit returns the reset after it, the next after it
-- and its token (see lib.lua).
-- The estimate is floor(prev * (window - elapsed) / window) + cur. A stored
-- start after the current window's (the clock stepped back) is still the
-- current window: elapsed is then negative, the estimate weighs prev fully,
-- and waits count until that window's start.

-- sw_first is the smallest elapsed e >= 0 with
-- floor(prev * (window - e) / window) <= room, for room >= 0.
local function sw_first(prev, room, window)
  if prev <= room then
    return 0
  end
  return idiv(window * (prev - room - 1), prev) + 1
end

-- sw_reset is when state with the previous count prev and the current
-- count cur, elapsed into the window, is back to fresh.
local function sw_reset(prev, cur, elapsed, window)
  if cur > 0 then
    return window - elapsed + sw_first(cur, 0, window)
  end
  return max(0, sw_first(prev, 0, window) - elapsed)
end

-- sw_next is when the estimate of that state first drops by one unit: as
-- prev's weight fades, or, with prev's weight gone, as cur fades in the
-- next window.
local function sw_next(prev, cur, elapsed, window)
  local weighted = idiv(prev * (window - max(0, elapsed)), window)
  if weighted > 0 then
    return sw_first(prev, weighted - 1, window) - elapsed
  end
  if cur > 0 then
    return window - elapsed + sw_first(cur, cur - 1, window)
  end
  return 0
end

algorithms.sw = function(key, now, cost, limit, window)
  local start = now - fmod(now, window)
  local s, c, p = load_state(key)
  local cur, prev = 0, 0
  if s and s >= start then
    start, cur, prev = s, c, p
  elseif s == start - window then
    prev = c
  end
  local elapsed = now - start
  local used = idiv(prev * (window - max(0, elapsed)), window) + cur
  local remaining = max(0, limit - used)
  local reset = sw_reset(prev, cur, elapsed, window)
  local next = sw_next(prev, cur, elapsed, window)
  if cost > limit then
    return -1, remaining, -1, reset, next
  end
  if used + cost > limit then
    local room = limit - cur - cost
    if room >= 0 then
      local e = sw_first(prev, room, window)
      if e < window then
        return 0, remaining, e - elapsed, reset, next
      end
    end
    -- In the next window this one's count becomes the weighted one.
    local e = min(window, sw_first(cur, limit - cost, window))
    return 0, remaining, window - elapsed + e, reset, next
  end
  return 1, remaining, 0, reset, next, start, cur, prev
end

-- The token's stamp is the window start written.
commits.sw = function(key, now, cost, limit, window, _, start, cur, prev)
  local after = sw_reset(prev, cur + cost, now - start, window)
  store(key, after, "%d:%d:%d", start, cur + cost, prev)
  return after, sw_next(prev, cur + cost, now - start, window), start, 0
end

if refunds then
  -- The count sits in c while the window lasts, in p once the next began.
  refunds.sw = function(key, now, at, cost, back, stamp, _, _, limit, window)
    local s, c, p = load_state(key)
    if s == stamp then
      rewrite(key, "%d:%d:%d", s, max(0, c - back), p)
    elseif s == stamp + window then
      rewrite(key, "%d:%d:%d", s, c, max(0, p - back))
    end
  end
end
