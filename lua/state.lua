-- Packed state, for the algorithms that keep two or three integers per key
-- (fixed window, sliding window, the buckets); included only in scripts
-- whose stacks use one of them.
-- KEYS: none of its own; the helpers take the key. ARGV: none. Reply: none.

-- Packed state: the fixed window, the sliding window and the buckets keep
-- their two or three integers in one string, "a:b" or "a:b:c", written
-- with %d (exact) by one SET with its TTL. load_state returns them, or
-- nothing for a missing key.
local function load_state(key)
  local v = get(key)
  if v then
    local a, b, c = match(v, "^(%d+):(%d+):?(%d*)$")
    return tonumber(a), tonumber(b), tonumber(c)
  end
end

-- store writes packed state with a TTL of us microseconds.
local function store(key, us, fmt, ...)
  put(key, format(fmt, ...), ttl_ms(us))
end

-- rewrite writes packed state again and keeps the key's TTL (for refunds).
local function rewrite(key, fmt, ...)
  call("SET", key, format(fmt, ...), "KEEPTTL")
end
