-- Sliding log (algorithms.SlidingLog), registered as algorithms.sl.
-- KEYS: the rule's key, a sorted set of admitted units scored by their time
--   in µs. A unit of a decision that carries an id (its slot: store.Check.Slot,
--   a positive integer below 2^53) is "<time>:#<slot>:<i>", i counting its
--   units 1..cost, so that its refund removes exactly its own units and a
--   refund sent twice removes nothing more. Any other unit is "<time>:<n>",
--   n (six digits, zero-padded, so members of one time sort by n) counting
--   the id-less units of that time 1, 2, 3...: units of the same
--   microsecond stay distinct. '#' sorts before the digits, so of one time
--   the id-less units sort last (a refund by the instant removes them
--   first).
-- ARGV: limit, window in µs (p3 unused); cost and now come from stack.lua.
-- Reply: status, remaining, retry µs, reset µs, next µs and the state its
-- commit needs; the commit returns the reset after it, the next after it
-- and its token (see lib.lua).
-- A unit counts while now - window < time. Scores are formatted with %d:
-- '..' would keep only 14 digits of a 16-digit timestamp. Times are read
-- back from member names, which this file writes, not from score replies,
-- whose formatting differs between servers.

-- sl_time is the time of a member "<time>:<n>".
local function sl_time(member)
  return tonumber(match(member, "^%d+"))
end

algorithms.sl = function(key, now, cost, limit, window)
  local oldest = format("(%d", now - window)
  local count = call("ZCOUNT", key, oldest, "+inf")
  local newest, next = now - window, 0
  if count > 0 then
    newest = sl_time(call("ZRANGE", key, "-1", "-1")[1])
    -- Quota comes back as the oldest unit in the window leaves it.
    next = sl_time(call("ZRANGEBYSCORE", key, oldest, "+inf", "LIMIT", "0", "1")[1]) + window - now
  end
  local remaining = max(0, limit - count)
  local reset = newest + window - now
  if cost > limit then
    return -1, remaining, -1, reset, next
  end
  if count + cost > limit then
    -- The (count + cost - limit)-th oldest unit must leave the window.
    local first = call("ZRANGEBYSCORE", key, oldest, "+inf", "LIMIT", int(count + cost - limit - 1), "1")
    return 0, remaining, sl_time(first[1]) + window - now, reset, next
  end
  return 1, remaining, 0, reset, next, newest, next
end

-- next is the held result's: 0 when the log had no unit in the window, or
-- beyond window when its oldest unit is later than now (the clock stepped
-- back); the units just added are then the oldest. slot is the decision's
-- id (0 or nil: none), which the commit returns as its token's stamp.
-- Id-less units are numbered after the highest number of that time (the
-- last member of the time, when it is id-less) and after the count of the
-- time's units: a name stays unique when units with ids were removed
-- from among them. (Known gap: during a rolling deploy, a decision of the
-- code before ids, which numbered by the count alone, can write over an
-- id-less unit of the same key and microsecond: a unit fewer.)
commits.sl = function(key, now, cost, limit, window, _, newest, next, _s3, slot)
  call("ZREMRANGEBYSCORE", key, "-inf", int(now - window))
  local at = int(now)
  local name
  if slot and slot > 0 then
    name = function(i)
      return format("%d:#%d:%d", now, slot, i)
    end
  else
    slot = 0
    local seq = call("ZCOUNT", key, at, at)
    local last = call("ZREVRANGEBYSCORE", key, at, at, "LIMIT", "0", "1")[1]
    local n = last and match(last, "^%d+:(%d+)$")
    if n and tonumber(n) > seq then
      seq = tonumber(n)
    end
    name = function(i)
      return format("%d:%06d", now, seq + i)
    end
  end
  local batch = {}
  for i = 1, cost do
    batch[#batch + 1] = at
    batch[#batch + 1] = name(i)
    if #batch >= 1000 or i == cost then
      call("ZADD", key, unpack(batch))
      batch = {}
    end
  end
  local after = max(newest, now) + window - now
  call("PEXPIRE", key, ttl_ms(after))
  if next == 0 or next > window then
    next = window
  end
  return after, next, slot, 0
end

if refunds then
  -- A decision with an id (its token's stamp, slot) gives back its own
  -- units cost - back + 1 .. cost: those already gone (given back before,
  -- expired) are not replaced by others, so sending a refund again
  -- changes nothing. Without an id, units of one time are
  -- interchangeable: removing the last `back` of them keeps the numbering
  -- 1..n of the rest, so later adds stay distinct. A decision whose
  -- instant is unknown (at is nil: its reply was lost) is found by its id
  -- among the units since earliest (all of them when nil); without an id
  -- it gives nothing.
  refunds.sl = function(key, now, at, cost, back, slot, _, _, _, _, _, earliest)
    local gone = {}
    if not at then
      if slot and slot > 0 then
        local id, members = int(slot), nil
        if earliest then
          members = call("ZRANGEBYSCORE", key, int(earliest), "+inf")
        else
          members = call("ZRANGE", key, 0, -1)
        end
        for i = 1, #members do
          local s, n = match(members[i], "^%d+:#(%d+):(%d+)$")
          if s == id and tonumber(n) > cost - back then
            gone[#gone + 1] = members[i]
          end
        end
      end
    elseif slot and slot > 0 then
      at = int(at)
      for i = max(1, cost - back + 1), cost do
        gone[#gone + 1] = format("%d:#%d:%d", at, slot, i)
      end
    else
      at = int(at)
      local members = call("ZRANGEBYSCORE", key, at, at)
      for i = max(1, #members - back + 1), #members do
        gone[#gone + 1] = members[i]
      end
    end
    for i = 1, #gone, 1000 do
      call("ZREM", key, unpack(gone, i, min(#gone, i + 999)))
    end
  end
end

-- A concurrency limit (algorithms.Concurrency) is a sliding log whose
-- window is the TTL: one entry per slot, given back by its refund when
-- the request ends, expiring after the TTL otherwise. Registered as
-- algorithms.cc.
algorithms.cc, commits.cc = algorithms.sl, commits.sl
if refunds then
  refunds.cc = refunds.sl
end
