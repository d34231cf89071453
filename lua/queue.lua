-- Leaky bucket as a queue (algorithms.Queue), registered as algorithms.qu.
-- KEYS: the rule's key, a string: the queue's tail (when the last admitted
--   request's turns end) in µs, as a TAT, then its tail (epoch, seen and
--   ledger, holes included; ledger.lua and the refund below), if any. A
--   missing key is an empty queue.
-- ARGV: rate, period in µs, max delay in µs; cost and now come from
--   stack.lua.
-- Reply: status, remaining, retry µs (for an allowed request, its delay:
-- how long it waits for its turn), reset µs, next µs and the state its
-- commit needs; the commit returns the reset after it, the next after it
-- and its token (see lib.lua).
-- A unit's turn lasts ceil(period / rate) µs (turn). A request starts at
-- max(tail, now) and takes cost turns; it is allowed iff its last unit's
-- turn starts within max delay, that is iff cost <= remaining, where
-- remaining = floor((max delay - wait) / turn) + 1 (0 when wait > max
-- delay) counts the turns that start within it.

-- queue_next is the time until one more turn starts within max delay,
-- for a tail wait ahead (0 when all of them do already).
local function queue_next(wait, max_delay, turn)
  if wait <= fmod(max_delay, turn) then
    return 0
  end
  if wait > max_delay then
    return wait - max_delay
  end
  return turn - fmod(max_delay - wait, turn)
end

algorithms.qu = function(key, now, cost, rate, period, max_delay)
  local tat, tail = tat_load(key)
  local base = max(now, tat or now)
  local wait, turn = base - now, cdiv(period, rate)
  local remaining = 0
  if wait <= max_delay then
    remaining = idiv(max_delay - wait, turn) + 1
  end
  local next = queue_next(wait, max_delay, turn)
  if cost > idiv(max_delay, turn) + 1 then
    return -1, remaining, -1, wait, next
  end
  if cost > remaining then
    return 0, remaining, wait + (cost - 1) * turn - max_delay, wait, next
  end
  return 1, remaining, wait, wait, next, wait, tail
end

commits.qu = function(key, now, cost, rate, period, max_delay, wait, tail, _, slot)
  local turn = cdiv(period, rate)
  local after = wait + cost * turn
  local fresh
  if wait == 0 then
    fresh = slot
  end
  local stamp, refunded, epoch = tat_commit(key, now, after, tail, fresh)
  return after, queue_next(after, max_delay, turn), stamp, refunded, epoch
end

if refunds then
  -- A give-back returns exactly the part of the back turns still ahead of
  -- now, in any order (model.queueRefund): the ledger's rest lists the
  -- holes, ",<stamp>,<refunded>,<length>" each, in the queue's order, a
  -- hole's place being the token (stamp, refunded) of the last decision it
  -- gave back for. Places are compared through differences, exact.

  -- queue_holes decodes a ledger's rest: the holes, {stamp, refunded,
  -- length} each.
  local function queue_holes(rest)
    local holes, i = {}, 1
    while true do
      local m, r, g, j = match(rest, "^,(%d+),(%d+),(%d+)()", i)
      if not m then
        return holes
      end
      holes[#holes + 1] = {tonumber(m), tonumber(r), tonumber(g)}
      i = j
    end
  end

  -- queue_with is model.withHole: holes with the give-back of give µs by
  -- the decision at place (stamp, refunded), whose own µs of turns end
  -- there, added, merged with the hole that ends where those turns begin
  -- and with the one whose give-backs begin where they end.
  local function queue_with(holes, stamp, refunded, own, give)
    local i = 1
    while holes[i] and stamp - holes[i][1] > holes[i][2] - refunded do
      i = i + 1
    end
    local h, lo, hi = {stamp, refunded, give}, i, i
    local b, a = holes[i - 1], holes[i]
    if b and stamp - b[1] == own + b[2] - refunded then
      h[3], lo = h[3] + b[3], i - 1
    end
    if a and a[1] - stamp == a[3] + refunded - a[2] then
      h, hi = {a[1], a[2], a[3] + h[3]}, i + 1
    end
    local out = {}
    for k = 1, lo - 1 do
      out[k] = holes[k]
    end
    out[lo] = h
    for k = hi, #holes do
      out[#out + 1] = holes[k]
    end
    return out
  end

  -- queue_rest is model.holesAhead, encoded as a ledger's rest: the holes
  -- whose place is not behind now, for a ledger that gave back r.
  local function queue_rest(holes, now, r)
    local rest, later = "", 0
    for k = #holes, 1, -1 do
      local h = holes[k]
      if h[1] - now <= r - h[2] - later then
        return rest
      end
      later = later + h[3]
      rest = format(",%d,%d,%d", h[1], h[2], h[3]) .. rest
    end
    return rest
  end

  -- The tail is a TAT; back units are back turns. Of what was given back
  -- since the decision, the holes after its place came from later
  -- decisions; the rest moved its turns forward (at least 0: a token older
  -- than the ledger has turns that ended before now, and gets nothing).
  refunds.qu = function(key, now, at, cost, back, stamp, refunded, epoch, rate, period)
    local tat, tail = tat_load(key)
    if not tat then
      return
    end
    local r, u, s, rest, e, w = ledger_read(tail, now)
    if e ~= epoch or at <= s or r < refunded then
      return
    end
    local holes, later = queue_holes(rest), 0
    for k = 1, #holes do
      if holes[k][1] - stamp > refunded - holes[k][2] then
        later = later + holes[k][3]
      end
    end
    local turn = cdiv(period, rate)
    local give = min(back * turn, tat - now, drain(stamp - at - max(0, r - refunded - later), max(now, w or now) - at, 1))
    if give <= 0 then
      return
    end
    local restarted
    r, u, s, restarted = ledger_record(r, u, s, now, give, tat)
    rest = ""
    if not restarted then
      rest = queue_rest(queue_with(holes, stamp, refunded, cost * turn, give), now, r)
    end
    call("SET", key, int(tat - give) .. ledger_tail(e, w, r, u, s, rest), "KEEPTTL")
  end
end
