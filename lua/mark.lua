-- A block, or a Reset's mark: a key holding the instant it ends, in µs
-- since the Unix epoch (shared by block.lua and delete.lua).
-- KEYS, ARGV: none of its own. Reply: none; the drivers reply.

-- extend makes the block at key end at now + d (d > 0, µs), unless it
-- ends later already, and returns when it ends. The key lasts until then
-- or, given life (ms, > 0), that long, but never less than it had left.
local function extend(key, now, d, life)
  local until_us = now + d
  local current = tonumber(call("GET", key))
  if current and current > until_us then
    if not life then
      return current
    end
    until_us = current
  end
  local ms = ttl_ms(until_us - now)
  if life then
    ms = int(max(1, life, call("PTTL", key)))
  end
  call("SET", key, int(until_us), "PX", ms)
  return until_us
end
