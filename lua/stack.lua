-- Decides a stack of rules in one run, all-or-nothing: every rule is
-- checked first, and state is written only if every rule allows.
-- KEYS[i]: the state key of rule i.
-- ARGV[1]: now in µs since the Unix epoch, or "" to read the server's TIME.
-- ARGV[2]: the shortest TTL in ms a written key gets (normally 1; longer
--   when a passed-in clock may run slower than the server's).
-- ARGV[3 + 5*(i-1) ...]: rule i's algorithm code (fw, sl, sw, tb, lb, gc),
--   its three integer parameters, and the request's cost for it.
-- Reply: {allowed, now, then per rule: status, remaining, retry_ms,
--   reset_ms, token}.
--   allowed is 1 when every rule allowed (and their state was written),
--   else 0 (and nothing was written). now is the time decided at, in µs.
--   status is 1 allowed, 0 denied, -1 cost above what the rule can ever
--   admit (retry_ms is then -1). remaining counts after this request;
--   retry_ms and reset_ms are rounded up to whole milliseconds. token is
--   what refund.lua needs to undo the rule's commit (0 when not written).
local now = ARGV[1]
if now == "" then
  local t = call("TIME")
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
else
  now = tonumber(now)
end

-- decide_rule decides rule i without writing: status, remaining, retry (in
-- ms, rounded up, or -1), reset in µs, the cost and what the commit needs.
-- It returns nil and an error reply for an unknown algorithm.
local function decide_rule(i)
  local a = 3 + 5 * (i - 1)
  local decide = algorithms[ARGV[a]]
  if decide == nil then
    return nil, redis.error_reply("ratelimit: unknown algorithm " .. tostring(ARGV[a]))
  end
  local cost = tonumber(ARGV[a + 4])
  local status, remaining, retry, reset, s1, s2, s3 =
    decide(KEYS[i], now, cost, tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2]), tonumber(ARGV[a + 3]))
  if retry > 0 then
    retry = cdiv(retry, 1000)
  end
  return status, remaining, retry, reset, cost, s1, s2, s3
end

-- commit_rule writes rule i's admitted state: the reset after it, in ms,
-- and the refund token.
local function commit_rule(i, cost, s1, s2, s3)
  local a = 3 + 5 * (i - 1)
  local after, token = commits[ARGV[a]](KEYS[i], now, cost,
    tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2]), tonumber(ARGV[a + 3]), s1, s2, s3)
  return cdiv(after, 1000), token
end

-- One rule, the common case, needs neither the loop nor its tables (their
-- growth costs more than the rest of a GCRA decision).
if #KEYS == 1 then
  local status, remaining, retry, reset, cost, s1, s2, s3 = decide_rule(1)
  if status == nil then
    return remaining
  end
  if status == 1 and cost > 0 then
    local after, token = commit_rule(1, cost, s1, s2, s3)
    return {1, now, 1, remaining - cost, 0, after, token}
  end
  return {status == 1 and 1 or 0, now, status, remaining, retry, cdiv(reset, 1000), 0}
end

local reply = {1, now}
local states = {}
for i = 1, #KEYS do
  local status, remaining, retry, reset, cost, s1, s2, s3 = decide_rule(i)
  if status == nil then
    return remaining
  end
  if status ~= 1 then
    reply[1] = 0
  end
  local r = 3 + 5 * (i - 1)
  reply[r], reply[r + 1], reply[r + 2], reply[r + 3], reply[r + 4] = status, remaining, retry, cdiv(reset, 1000), 0
  states[i] = {cost, s1, s2, s3}
end

if reply[1] == 1 then
  for i = 1, #KEYS do
    local st = states[i]
    if st[1] > 0 then
      local r = 3 + 5 * (i - 1)
      reply[r + 1] = reply[r + 1] - st[1]
      reply[r + 3], reply[r + 4] = commit_rule(i, st[1], st[2], st[3], st[4])
    end
  end
end
return reply
