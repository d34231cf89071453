-- The ledger of give-backs kept by the rules whose state drains (token and
-- leaky buckets, GCRA, a queue), and the TAT state GCRA and the queue
-- share; included only in scripts whose stacks use one of them. The bound
-- it enforces is model.Ledger's: a give-back returns at most what the
-- decision's own level (its token's stamp), drained since and less what
-- earlier decisions gave back since, still holds, and at most the level
-- now, so it never returns more than a smaller decision at the original
-- instant would have left. A queue's give-backs, exact, are queue.lua's.
-- KEYS: none of its own; the helpers take the key. ARGV: none. Reply: none.
-- A state with a ledger ends in ":<refunded>:<until>:<since>" (points or
-- µs): what was given back, an instant no token outlives (past it the
-- ledger is forgotten) and when refunded last started again from 0 (it
-- reached MAX_REFUNDED, or a bucket's or GCRA's plan changed:
-- ledger_switch); a queue's then lists its holes (queue.lua). A state
-- without one (nothing given back since it was fresh) has no tail; GCRA's
-- stores ":0:0:0" in its place, then its plan (gcra.lua).

-- MAX_REFUNDED is model.MaxRefunded, 2^52.
local MAX_REFUNDED = 4503599627370496

-- ledger_read decodes a tail as of now: refunded, until, since and the
-- rest (a queue's holes), 0, 0, 0 and "" for no tail or one past its
-- until.
local function ledger_read(tail, now)
  if tail and tail ~= "" then
    local r, u, s, rest = match(tail, "^:(%d+):(%d+):(%d+)(.*)$")
    u = tonumber(u)
    if u > now then
      return tonumber(r), u, tonumber(s), rest
    end
  end
  return 0, 0, 0, ""
end

-- ledger_keep is a commit's part: the tail to store, the TTL (µs) the state
-- needs (the ledger keeps it alive until its until) and the refunded count
-- for the token, for a state that drains after µs from now.
local function ledger_keep(tail, now, after)
  local r, u, s, rest = ledger_read(tail, now)
  if u == 0 then
    return "", after, 0
  end
  u = max(u, now + after)
  return format(":%d:%d:%d", r, u, s) .. rest, u - now, r
end

-- drain is a level x after dt µs of draining rate points per µs, never
-- below 0, computed without a product above x.
local function drain(x, dt, rate)
  if x <= 0 then
    return 0
  end
  if dt <= 0 then
    return x
  end
  if dt >= cdiv(x, rate) then
    return 0
  end
  return x - dt * rate
end

-- ledger_record is model.Ledger.record: the ledger (refunded, until,
-- since) after a give-back of give at now from a state that drains by
-- horizon, and whether refunded started again from 0.
local function ledger_record(r, u, s, now, give, horizon)
  r, u = r + give, max(u, horizon)
  if r > MAX_REFUNDED then
    return 0, u, now, true
  end
  return r, u, s, false
end

-- ledger_refund is how much of want a give-back for a decision at `at` with
-- token (stamp, refunded) may return at now, given the level now: stamp is
-- the decision's level in points (or its TAT's lead over at), draining
-- rate per µs, of which the decision added own. What was given back since
-- counts only up to what the earlier decisions held, stamp - own (see
-- model.Ledger.refund). It returns that amount and the tail to store with
-- it.
local function ledger_refund(tail, now, at, stamp, own, refunded, want, level, rate, horizon)
  local r, u, s = ledger_read(tail, now)
  if at <= s or r < refunded then
    return 0
  end
  local earlier = min(r - refunded, max(0, stamp - own))
  local give = min(want, level, drain(stamp - earlier, now - at, rate))
  if give <= 0 then
    return 0
  end
  r, u, s = ledger_record(r, u, s, now, give, horizon)
  return give, format(":%d:%d:%d", r, u, s)
end

-- ledger_switch is the tail a state written under a new plan at now starts
-- with (model.Ledger.switched), from the old tail and the old level
-- (drained to last at rate): "" once no decision under the old plan can
-- give back (its level drained, its ledger's until past), else one that
-- has given nothing back, lasts until then and voids the give-backs of
-- every decision made at or before last.
local function ledger_switch(tail, now, last, level, rate)
  local _, u = ledger_read(tail, now)
  if level > 0 then
    u = max(u, last + cdiv(level, rate))
  end
  if u > now then
    return format(":0:%d:%d", u, last)
  end
  return ""
end

-- tat_parse reads a TAT state's value v (GET's reply): the TAT in µs (nil
-- for a missing key) and its ledger's tail.
local function tat_parse(v)
  local tat = tonumber(v)
  if tat or not v then
    return tat
  end
  local t, tail = match(v, "^(%d+)(:.*)$")
  return tonumber(t), tail
end

-- tat_load reads the TAT state at key (see tat_parse).
local function tat_load(key)
  return tat_parse(get(key))
end

-- tat_commit stores the TAT now + after, with the ledger carried, and
-- returns the token's stamp and refunded count. plan, when not nil, ends
-- the string, after the ledger's three integers (GCRA's, gcra.lua).
local function tat_commit(key, now, after, tail, plan)
  local kept, ttl, refunded = ledger_keep(tail, now, after)
  if plan then
    if kept == "" then
      kept = ":0:0:0"
    end
    kept = kept .. plan
  end
  put(key, int(now + after) .. kept, ttl_ms(ttl))
  return now + after, refunded
end
