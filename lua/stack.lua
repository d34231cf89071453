-- Decides a stack of rules in one run, all-or-nothing: every rule is
-- checked first, and state is written only if every rule allows.
-- KEYS[i], i <= n: the state key of rule i, for the n rules of ARGV; then
--   the block key of each rule that takes blocks, in rule order.
-- ARGV[1]: now in µs since the Unix epoch, or "" to read the server's TIME.
-- ARGV[2]: the shortest TTL in ms a written key gets (normally 1; longer
--   when a passed-in clock may run slower than the server's).
-- ARGV[ARGS_HEAD + 1 + ARGS_PER_RULE*(i-1) ...]: rule i as
--   "<code>:<p1>:<p2>:<p3>" (its algorithm code, fw, sl, sw, tb, lb, gc,
--   qu or cc, and its three integer parameters; see rule in lib.lua), the
--   request's cost for it, and its penalty: "" when the rule takes no
--   blocks, else the µs a denial of this rule blocks the client for (0:
--   none).
-- Reply: {allowed, now (REPLY_HEAD values), then per rule (REPLY_PER_RULE
--   values): status, remaining, retry, reset, next, token}. The layout
--   constants come from the Go package that assembles the script.
--   allowed is 1 when every rule allowed (and their state was written),
--   else 0 (and nothing was written). now is the time decided at, in µs.
--   status is 1 allowed, 0 denied, -1 cost above what the rule can ever
--   admit (retry is then -1), -2 blocked (by Block, or by the penalty of
--   this denial). For an allowed rule retry is its delay (a queue's wait
--   for the request's turn; 0 for the other algorithms). remaining counts
--   after this request. retry, reset and next (until one more unit is
--   available, 0 when none is used) are in µs (Go rounds them up to whole
--   milliseconds). token is what refund.lua needs to undo the rule's
--   commit (0 when not written).
local now, err = clock()
if not now then
  return err
end

-- The rules, and the block keys after their state keys.
local n = (#ARGV - ARGS_HEAD) / ARGS_PER_RULE
local block_key = n

-- blocked is the time left of the block at key, if any.
local function blocked(key)
  local until_us = tonumber(call("GET", key))
  if until_us and until_us > now then
    return until_us - now
  end
end

-- decide_rule decodes rule i's arguments and decides it without writing:
-- status, remaining, retry, reset and next (µs), then what its commit
-- needs: the algorithm code, the cost, the three parameters and the
-- state. It returns nil and an error reply for an unknown algorithm. A
-- rule that takes blocks is first checked against its block key, and a
-- denial with a penalty blocks the client.
local function decide_rule(i)
  local a = ARGS_HEAD + 1 + ARGS_PER_RULE * (i - 1)
  local r = rule(ARGV[a])
  local decide = r and algorithms[r[1]]
  if decide == nil then
    return nil, unknown(ARGV[a])
  end
  local code, p1, p2, p3, cost = r[1], r[2], r[3], r[4], tonumber(ARGV[a + 1])
  local penalty, bkey = tonumber(ARGV[a + 2]), nil
  if penalty then
    block_key = block_key + 1
    bkey = KEYS[block_key]
    local left = blocked(bkey)
    if left then
      return -2, 0, left, left, left, code, cost
    end
  end
  local status, remaining, retry, reset, next, s1, s2, s3 = decide(KEYS[i], now, cost, p1, p2, p3)
  if status == 0 and penalty and penalty > 0 then
    call("SET", bkey, int(now + penalty), "PX", ttl_ms(penalty))
    return -2, remaining, max(retry, penalty), max(reset, penalty), max(next, penalty), code, cost
  end
  return status, remaining, retry, reset, next, code, cost, p1, p2, p3, s1, s2, s3
end

-- One rule, the common case, needs neither the loop nor its tables.
if n == 1 then
  local status, remaining, retry, reset, next, code, cost, p1, p2, p3, s1, s2, s3 = decide_rule(1)
  if status == nil then
    return remaining
  end
  if status == 1 and cost > 0 then
    local after, token, next_after = commits[code](KEYS[1], now, cost, p1, p2, p3, s1, s2, s3)
    return {1, now, 1, remaining - cost, retry, after, next_after, token}
  end
  return {status == 1 and 1 or 0, now, status, remaining, retry, reset, next, 0}
end

-- A stack: decide every rule, keeping what its commit needs, then commit
-- them all only if every rule allowed.
local reply = {1, now}
local pending = {}
for i = 1, n do
  local status, remaining, retry, reset, next, code, cost, p1, p2, p3, s1, s2, s3 = decide_rule(i)
  if status == nil then
    return remaining
  end
  if status ~= 1 then
    reply[1] = 0
  end
  local r = REPLY_HEAD + 1 + REPLY_PER_RULE * (i - 1)
  reply[r], reply[r + 1], reply[r + 2], reply[r + 3], reply[r + 4], reply[r + 5] = status, remaining, retry, reset, next, 0
  pending[i] = {code, cost, p1, p2, p3, s1, s2, s3}
end

if reply[1] == 1 then
  for i = 1, n do
    local p = pending[i]
    local cost = p[2]
    if cost > 0 then
      local r = REPLY_HEAD + 1 + REPLY_PER_RULE * (i - 1)
      local after, token, next_after = commits[p[1]](KEYS[i], now, cost, p[3], p[4], p[5], p[6], p[7], p[8])
      reply[r + 1], reply[r + 3], reply[r + 4], reply[r + 5] = reply[r + 1] - cost, after, next_after, token
    end
  end
end
return reply
