-- The ledger of give-backs kept by the rules whose state drains (token and
-- leaky buckets, GCRA, a queue), the epoch of their state, and the
-- TAT state GCRA and the queue share; included only in scripts whose
-- stacks use one of them. The bound it enforces is model.Ledger's: a
-- give-back returns at most what the decision's own level (its token's
-- stamp), drained since and less what earlier decisions gave back since,
-- still holds, and at most the level now, so it never returns more than a
-- smaller decision at the original instant would have left. A queue's
-- give-backs, exact, are queue.lua's.
-- KEYS: none of its own; the helpers take the key. ARGV: none. Reply: none.
-- A state's tail, after its own integers, is "#<epoch>", the epoch
-- (model.State.Epoch: the slot id of the decision that wrote the state
-- empty; absent for none), then, for GCRA and a queue, "@<seen>", the
-- latest instant the state was decided at in its epoch
-- (model.State.Seen), then, with a ledger, ":<refunded>:<until>:
-- <since>" (points or µs): what was given back, an instant no token
-- outlives (past it the ledger is forgotten) and when refunded last
-- started again from 0 (it reached MAX_REFUNDED, or a bucket's or GCRA's
-- plan changed: ledger_switch); a queue's then lists its holes
-- (queue.lua). A state without a ledger (nothing given back since it was
-- fresh) has none of it; GCRA's stores ":0:0:0" in its place, then its
-- plan (gcra.lua). A give-back goes only into the epoch its token
-- names: a state emptied and written afresh holds none of its units,
-- whatever the clock did since.

-- MAX_REFUNDED is model.MaxRefunded, 2^52.
local MAX_REFUNDED = 4503599627370496

-- ledger_read decodes a tail as of now: refunded, until, since, the rest
-- (a queue's holes), the epoch and seen; 0, 0, 0 and "" for no ledger or
-- one past its until, an epoch of 0 for none and a seen of nil for none.
local function ledger_read(tail, now)
  if not tail or tail == "" then
    return 0, 0, 0, "", 0
  end
  local e, w, r, u, s, rest = match(tail, "^#?(%d*)@?(%d*):?(%d*):?(%d*):?(%d*)(.*)$")
  e, w, u = tonumber(e) or 0, tonumber(w), tonumber(u)
  if u and u > now then
    return tonumber(r), u, tonumber(s), rest, e, w
  end
  return 0, 0, 0, "", e, w
end

-- epoch_tail is the tail of epoch e and seen w (nil for none) without a
-- ledger.
local function epoch_tail(e, w)
  if e > 0 then
    if w then
      return format("#%d@%d", e, w)
    end
    return format("#%d", e)
  elseif w then
    return format("@%d", w)
  end
  return ""
end

-- ledger_tail is the tail of epoch e and seen w with the ledger
-- (refunded, until, since) and the rest.
local function ledger_tail(e, w, r, u, s, rest)
  return epoch_tail(e, w) .. format(":%d:%d:%d", r, u, s) .. rest
end

-- ledger_keep is a commit's part: the tail to store, the TTL (µs) the state
-- needs (the ledger keeps it alive until its until), and the refunded count
-- and epoch for the token, for a state that drains after µs from
-- now. fresh, when not nil, is the epoch of a state written empty (a
-- missing one, a level drained to 0, a TAT not ahead of now): the
-- deciding decision's slot id (0: none); a state that holds units keeps
-- its own (model.State.Epoch). A TAT state (tat true) keeps seen too:
-- now in a fresh epoch, else the later of its own and now. none is what
-- stands for no ledger ("" when nil).
local function ledger_keep(tail, now, after, fresh, tat, none)
  local r, u, s, rest, e, w = ledger_read(tail, now)
  if fresh then
    e, w = fresh, nil
  end
  if tat then
    w = max(w or now, now)
  end
  if u == 0 then
    return epoch_tail(e, w) .. (none or ""), after, 0, e
  end
  u = max(u, now + after)
  return ledger_tail(e, w, r, u, s, rest), u - now, r, e
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
-- token (stamp, refunded, epoch) may return at now, given the level now:
-- stamp is the decision's level in points (or its TAT's lead over at),
-- draining rate per µs, of which the decision added own, from at to the
-- latest instant the state has drained to: now, or last (a bucket's last
-- update) or the tail's seen (a TAT state's) when later. Nothing when the
-- state is of another epoch than the token's. What was given back
-- since counts only up to what the earlier decisions held, stamp - own
-- (see model.Ledger.refund). It returns that amount and the tail to store
-- with it.
local function ledger_refund(tail, now, last, at, stamp, own, refunded, epoch, want, level, rate, horizon)
  local r, u, s, _, e, w = ledger_read(tail, now)
  if e ~= epoch or at <= s or r < refunded then
    return 0
  end
  local earlier = min(r - refunded, max(0, stamp - own))
  local give = min(want, level, drain(stamp - earlier, max(now, last or w or now) - at, rate))
  if give <= 0 then
    return 0
  end
  r, u, s = ledger_record(r, u, s, now, give, horizon)
  return give, ledger_tail(e, w, r, u, s, "")
end

-- ledger_switch is the tail a state written under a new plan at now starts
-- with (model.Ledger.switched), from the old tail and the old level
-- (drained to last at rate): "" once no decision under the old plan can
-- give back (its level drained, its ledger's until past), else one that
-- has given nothing back, lasts until then and voids the give-backs of
-- every decision made at or before last.
local function ledger_switch(tail, now, last, level, rate)
  local _, u, _, _, e, w = ledger_read(tail, now)
  if level > 0 then
    u = max(u, last + cdiv(level, rate))
  end
  if u > now then
    return ledger_tail(e, w, 0, u, last, "")
  end
  return epoch_tail(e, w)
end

-- tat_load reads the TAT state at key: the TAT in µs and its tail (epoch,
-- seen and, with a ledger, the rest), or nil for a missing key.
local function tat_load(key)
  local tat, tail = match(get(key) or "", "^(%d+)([#@].*)$")
  return tonumber(tat), tail
end

-- tat_commit stores the TAT now + after, with the epoch (fresh, when
-- not nil: see ledger_keep) and the ledger carried, and returns the
-- token's stamp, refunded count and epoch. plan, when not nil, ends
-- the string, after the ledger's three integers (GCRA's, gcra.lua).
local function tat_commit(key, now, after, tail, fresh, plan)
  local none
  if plan then
    none = ":0:0:0"
  end
  local kept, ttl, refunded, epoch = ledger_keep(tail, now, after, fresh, true, none)
  put(key, int(now + after) .. kept .. (plan or ""), ttl_ms(ttl))
  return now + after, refunded, epoch
end
