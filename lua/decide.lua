-- The decision of one stack of rules, all-or-nothing, shared by the
-- drivers that decide (stack.lua: one stack; batch.lua: several in one
-- run). Included after the algorithm files.
-- KEYS, ARGV: none of its own; decide_stack takes where its stack's keys
-- and arguments start (their layout is stack.lua's). Reply: decide_stack
-- returns a stack's reply (see stack.lua).

-- blocked is the time left at now of the block at key, if any.
local function blocked(key, now)
  local until_us = tonumber(call("GET", key))
  if until_us and until_us > now then
    return until_us - now
  end
end

-- tagged_cost decodes the cost argument of a leased rule, "<cost>:<lease>"
-- (the request's cost and the most units it takes beyond it), or of a
-- shadow rule, "<cost>:shadow": the cost, the lease and whether the rule
-- is a shadow rule; 0, 0, false for a malformed one.
local function tagged_cost(arg)
  local cost, tag = match(arg, "^(%d+):(%w+)$")
  if tag == "shadow" then
    return tonumber(cost), 0, true
  end
  if cost == nil or tonumber(tag) == nil then
    return 0, 0, false
  end
  return tonumber(cost), tonumber(tag), false
end

-- decide_rule decodes the rule whose arguments start at ARGV[a] and
-- decides it on key without writing: status, remaining, retry, reset and
-- next (µs), then what its commit needs: the algorithm code, the cost, the
-- three parameters and the state, the lease taken (units beyond the
-- request's cost, which the cost returned includes), and last whether the
-- rule is a shadow rule, and the decision's slot (its id, 0 for none;
-- see sliding_log.lua). It returns nil and an error reply for an unknown
-- algorithm. A rule that takes blocks (bkey, its block key, is not nil) is
-- first checked against its block: a blocked client is denied, with the
-- longer of the block's time left and the rule's own waits (it is
-- admitted only once both allow); a denial with a penalty blocks the
-- client, unless the rule is a shadow rule or the cost is 0 (a peek
-- writes nothing).
local function decide_rule(key, a, bkey, now)
  local r = rule(ARGV[a])
  local decide = r and algorithms[r[1]]
  if decide == nil then
    return nil, unknown(ARGV[a])
  end
  local code, p1, p2, p3, cost, extra, shadow = r[1], r[2], r[3], r[4], tonumber(ARGV[a + 1]), 0, false
  if cost == nil then
    cost, extra, shadow = tagged_cost(ARGV[a + 1])
  end
  local penalty = tonumber(ARGV[a + 2])
  local slot = tonumber(ARGV[a + 3]) or 0
  local status, remaining, retry, reset, next, s1, s2, s3 = decide(key, now, cost, p1, p2, p3)
  if bkey then
    local left = blocked(bkey, now)
    if left then
      -- An allowed rule's retry is its delay, not a wait.
      if status == 1 then
        retry = left
      elseif status == 0 then
        retry = max(retry, left)
      end
      return -2, 0, retry, max(reset, left), max(next, left), code, cost, nil, nil, nil, nil, nil, nil, 0, shadow
    end
  end
  if status == 0 and penalty and penalty > 0 and cost > 0 and not shadow then
    call("SET", bkey, int(now + penalty), "PX", ttl_ms(penalty))
    return -2, remaining, max(retry, penalty), max(reset, penalty), max(next, penalty), code, cost, nil, nil, nil, nil, nil, nil, 0, false
  end
  -- A lease: up to extra more units, at most half of what remains beyond
  -- the cost, decided as one request of the whole (model.Take).
  local lease = 0
  if status == 1 and extra > 0 and cost > 0 then
    lease = min(extra, idiv(remaining - cost, 2))
    if lease > 0 then
      cost = cost + lease
      status, remaining, retry, reset, next, s1, s2, s3 = decide(key, now, cost, p1, p2, p3)
    end
  end
  return status, remaining, retry, reset, next, code, cost, p1, p2, p3, s1, s2, s3, lease, shadow, slot
end

-- stack_keys is how many keys the stack of n rules whose arguments follow
-- ARGV[a0] has: its state keys and a block key for each rule that takes
-- blocks (its penalty, its third argument, is not "").
local function stack_keys(a0, n)
  local keys = n
  for i = 1, n do
    if ARGV[a0 + 3 + ARGS_PER_RULE * (i - 1)] ~= "" then
      keys = keys + 1
    end
  end
  return keys
end

-- decide_stack decides, at now, the stack of n rules whose arguments follow
-- ARGV[a0] and whose keys follow KEYS[k0] (state keys, then block keys),
-- and returns its reply (see stack.lua), or nil and an error reply.
local function decide_stack(now, k0, a0, n)
  -- One rule, the common case, needs neither the loop nor its tables.
  if n == 1 then
    local a = a0 + 1
    local bkey
    if ARGV[a + 2] ~= "" then
      bkey = KEYS[k0 + 2]
    end
    local status, remaining, retry, reset, next, code, cost, p1, p2, p3, s1, s2, s3, lease, shadow, slot = decide_rule(KEYS[k0 + 1], a, bkey, now)
    if status == nil then
      return nil, remaining
    end
    if status == 1 and cost > 0 then
      local after, next_after, stamp, refunded, epoch = commits[code](KEYS[k0 + 1], now, cost, p1, p2, p3, s1, s2, s3, slot)
      return {1, now, 1, remaining - cost, retry, after, next_after, stamp, refunded, lease, epoch or 0}
    end
    return {(status == 1 or shadow) and 1 or 0, now, status, remaining, retry, reset, next, 0, 0, 0, 0}
  end

  -- A stack: decide every rule, keeping what its commit needs, then commit
  -- them all only if every rule but the shadow rules allowed (a shadow
  -- rule that denied commits nothing).
  local reply = {1, now}
  local pending = {}
  local b = k0 + n -- the last block key taken
  for i = 1, n do
    local a = a0 + 1 + ARGS_PER_RULE * (i - 1)
    local bkey
    if ARGV[a + 2] ~= "" then
      b = b + 1
      bkey = KEYS[b]
    end
    local status, remaining, retry, reset, next, code, cost, p1, p2, p3, s1, s2, s3, lease, shadow, slot = decide_rule(KEYS[k0 + i], a, bkey, now)
    if status == nil then
      return nil, remaining
    end
    if status ~= 1 then
      if shadow then
        cost = 0
      else
        reply[1] = 0
      end
    end
    local r = REPLY_HEAD + 1 + REPLY_PER_RULE * (i - 1)
    reply[r], reply[r + 1], reply[r + 2], reply[r + 3], reply[r + 4], reply[r + 5], reply[r + 6], reply[r + 7], reply[r + 8] = status, remaining, retry, reset, next, 0, 0, 0, 0
    pending[i] = {code, cost, p1, p2, p3, s1, s2, s3, lease, slot}
  end

  if reply[1] == 1 then
    for i = 1, n do
      local p = pending[i]
      local cost = p[2]
      if cost > 0 then
        local r = REPLY_HEAD + 1 + REPLY_PER_RULE * (i - 1)
        local after, next_after, stamp, refunded, epoch = commits[p[1]](KEYS[k0 + i], now, cost, p[3], p[4], p[5], p[6], p[7], p[8], p[10])
        reply[r + 1], reply[r + 3], reply[r + 4], reply[r + 5], reply[r + 6], reply[r + 7], reply[r + 8] = reply[r + 1] - cost, after, next_after, stamp, refunded, p[9], epoch or 0
      end
    end
  end
  return reply
end
