-- Fixed window (algorithms.FixedWindow), registered as algorithms.fw.
-- KEYS: the rule's key, a string "<window start in µs>:<count>".
-- ARGV: limit, window in µs, anchored (1: the window starts at a client's
-- first request after the last one ended; 0: aligned); cost and now come
-- from stack.lua.
-- Reply: status, remaining, retry µs, reset µs, next µs and the state its
-- commit needs; the commit returns the reset after it, the next after it
-- and its token (see lib.lua).
-- Windows are aligned to multiples of the window since the Unix epoch. A
-- stored start before the current one means a count of zero; a stored
-- start after it (the clock stepped back) is still the current window, so
-- a clock that steps back never admits more than a steady one.
algorithms.fw = function(key, now, cost, limit, window, anchored)
  local start = now - fmod(now, window)
  if anchored == 1 then
    start = now
  end
  local s, n = load_state(key)
  local count = 0
  -- An anchored window lasts until its start plus the window.
  if s and (s >= start or (anchored == 1 and s + window > now)) then
    start, count = s, n
  end
  local remaining = max(0, limit - count)
  local to_end = start + window - now
  local reset = 0
  if count > 0 then
    reset = to_end
  end
  -- Quota comes back all at once at the window's end: reset is also next.
  if cost > limit then
    return -1, remaining, -1, reset, reset
  end
  if count + cost > limit then
    return 0, remaining, to_end, reset, reset
  end
  return 1, remaining, 0, reset, reset, start, count
end

-- The token's stamp is the window start written.
commits.fw = function(key, now, cost, limit, window, _, start, count)
  local to_end = start + window - now
  store(key, to_end, "%d:%d", start, count + cost)
  return to_end, to_end, start, 0
end

if refunds then
  -- A window refunded to nothing is no window: an anchored one must not
  -- keep its start.
  refunds.fw = function(key, now, at, cost, back, stamp)
    local s, n = load_state(key)
    if s == stamp then
      if n > back then
        rewrite(key, "%d:%d", s, n - back)
      else
        call("DEL", key)
      end
    end
  end
end
