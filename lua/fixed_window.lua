-- Fixed window (algorithms.FixedWindow), registered as algorithms.fw.
-- KEYS: the rule's key, a hash {s = window start in µs, n = count}.
-- ARGV: limit, window in µs (p3 unused); cost and now come from stack.lua.
-- Reply: status, remaining, retry µs, reset µs, commit (see lib.lua).
-- Windows are aligned to multiples of the window since the Unix epoch. A
-- stored start other than the current one means a count of zero.
algorithms.fw = function(key, now, cost, limit, window)
  local start = now - fmod(now, window)
  local stored = call("HMGET", key, "s", "n")
  local count = 0
  if tonumber(stored[1]) == start then
    count = tonumber(stored[2])
  end
  local remaining = max(0, limit - count)
  local to_end = start + window - now
  local reset = 0
  if count > 0 then
    reset = to_end
  end
  if cost > limit then
    return -1, remaining, -1, reset
  end
  if count + cost > limit then
    return 0, remaining, to_end, reset
  end
  return 1, remaining, 0, reset, function()
    call("HSET", key, "s", start, "n", count + cost)
    expire(key, to_end)
    return to_end, 0
  end
end

refunds.fw = function(key, now, cost, token, limit, window)
  local start = now - fmod(now, window)
  local stored = call("HMGET", key, "s", "n")
  if tonumber(stored[1]) == start then
    call("HSET", key, "n", max(0, tonumber(stored[2]) - cost))
  end
end
