-- Shared helpers for the algorithm files. Not a script on its own: the Go
-- package concatenates lib.lua, the algorithm files a stack uses and a
-- driver (stack.lua or refund.lua) into one script, so these locals are
-- visible to all of them.
-- KEYS: none of its own. ARGV: reads ARGV[2], the minimum TTL (see
-- stack.lua). Reply: none; the drivers reply.
--
-- Numbers: Lua numbers are float64. Every quantity here is an integer below
-- 2^53 (algorithms.MaxExact), so +, -, * and math.fmod are exact. Division is
-- never used raw: idiv and cdiv divide exact multiples only. Numbers are
-- passed to redis.call as numbers (Redis formats them with full precision),
-- and never through tostring or '..', which keep only 14 digits.

-- Globals used on every call, bound once to locals (faster than a global
-- and a field lookup each time).
local call, tonumber, max, min, fmod = redis.call, tonumber, math.max, math.min, math.fmod

-- algorithms maps an algorithm code to its decide function:
--   decide(key, now, cost, p1, p2, p3) -> status, remaining, retry, reset, commit
-- status is 1 (allowed), 0 (denied) or -1 (cost above what the rule can ever
-- admit); remaining is what could be admitted before this request; retry and
-- reset are microseconds; commit, present only when allowed, writes the new
-- state and returns the reset after it and a refund token (see refunds).
local algorithms = {}

-- refunds maps an algorithm code to its refund function, which gives back
-- exactly what a commit at the same now consumed, whatever was decided on
-- the key since (used when a stack spans Redis Cluster slots):
--   refund(key, now, cost, token, p1, p2, p3)
-- token is what the commit returned (GCRA's TAT increment, else 0).
local refunds = {}

-- idiv is floor(a / b) for integers a >= 0, b > 0, computed exactly.
local function idiv(a, b)
  return (a - fmod(a, b)) / b
end

-- cdiv is ceil(a / b) for integers a >= 0, b > 0, computed exactly.
local function cdiv(a, b)
  local q = idiv(a, b)
  if q * b < a then
    q = q + 1
  end
  return q
end

-- min_ttl is the shortest TTL in ms (ARGV[2], see stack.lua), at least 1:
-- PEXPIRE 0 would delete the key.
local min_ttl = max(1, tonumber(ARGV[2]) or 1)

-- ttl_ms is a TTL of us microseconds in whole milliseconds, rounded up.
local function ttl_ms(us)
  return max(min_ttl, cdiv(us, 1000))
end

-- expire gives key a TTL of us microseconds (see ttl_ms).
local function expire(key, us)
  call("PEXPIRE", key, ttl_ms(us))
end

-- Packed state: the fixed window, the sliding window and the buckets keep
-- their two or three integers in one string, "a:b" or "a:b:c", written
-- with %d (exact) by one SET with its TTL. load_state returns them, or
-- nothing for a missing key.
local function load_state(key)
  local v = call("GET", key)
  if v then
    local a, b, c = string.match(v, "^(%d+):(%d+):?(%d*)$")
    return tonumber(a), tonumber(b), tonumber(c)
  end
end

-- store writes packed state with a TTL of us microseconds.
local function store(key, us, format, ...)
  call("SET", key, string.format(format, ...), "PX", ttl_ms(us))
end

-- restore rewrites packed state and keeps the key's TTL (for refunds).
local function restore(key, format, ...)
  call("SET", key, string.format(format, ...), "KEEPTTL")
end

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
  local remaining = idiv(cap - level, period)
  local reset = cdiv(level, rate)
  if cost > size then
    return -1, remaining, -1, reset
  end
  local need = cost * period
  if level + need > cap then
    return 0, remaining, cdiv(level + need - cap, rate), reset
  end
  return 1, remaining, 0, reset, function()
    level = level + need
    local after = cdiv(level, rate)
    store(key, after, "%d:%d", to_stored(level, cap), last)
    return after, 0
  end
end

-- meter_refund lowers the stored level by what a cost added. The level
-- drains linearly until empty, so taking the cost off the current level is
-- exact: either both levels are still positive, or both are empty.
local function meter_refund(key, to_stored, cost, size, period)
  local cap = size * period
  local stored, last = load_state(key)
  if stored then
    local level = min(cap, max(0, to_stored(stored, cap)))
    restore(key, "%d:%d", to_stored(max(0, level - cost * period), cap), last)
  end
end
