-- A block, or a Reset's mark: a key holding the instant it ends, in µs
-- since the Unix epoch (shared by block.lua and delete.lua).
-- KEYS, ARGV: none of its own. Reply: none; the drivers reply.

-- extend makes the block at key last until now + d (d > 0, µs), unless
-- it lasts longer already, and returns when it ends.
local function extend(key, now, d)
  local until_us = now + d
  local current = tonumber(call("GET", key))
  if current and current > until_us then
    return current
  end
  call("SET", key, int(until_us), "PX", ttl_ms(until_us - now))
  return until_us
end
