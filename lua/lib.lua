-- Shared helpers for the algorithm files. Not a script on its own: the Go
-- package concatenates lib.lua, the helper files and algorithm files a
-- stack uses (state.lua, verdict.lua, meter.lua), decide.lua for the
-- decision drivers, mark.lua for block.lua and delete.lua, and a driver
-- (stack.lua, refund.lua, block.lua or delete.lua) into one script, so these locals are visible to all of them.
-- Lua creates every function of a script again on each run, so a script
-- holds only what its stack uses, and refund functions only exist in
-- refund scripts. The same files also make one
-- Redis function library, every algorithm and each driver a function of
-- it, whose helpers are created once, when it loads.
-- KEYS: none of its own. ARGV: start reads ARGV[2], the minimum TTL (see
-- stack.lua). Reply: none; the drivers reply.
--
-- Numbers: Lua numbers are float64. Every quantity here is an integer below
-- 2^53 (exact.Max in Go), so +, -, * and math.fmod are exact. Division is
-- never used raw: idiv and cdiv divide exact multiples only. Numbers go to
-- redis.call as strings made by int (string.format's %d): exact, and about
-- twice as fast as Redis 7.0 formatting a Lua number itself with %.17g;
-- never through tostring or '..', which keep only 14 digits.

-- globals returns the Redis and Lua functions used on every run, bound to
-- locals (faster than a global and a field lookup each time). A function
-- library's body runs when it loads, when none of them can be reached yet:
-- start binds them on the first run.
local function globals()
  return redis.call, tonumber, math.max, math.min, math.fmod, string.format, string.match
end
local call, tonumber, max, min, fmod, format, match

-- KEYS and ARGV are the current run's; min_ttl is the shortest TTL in ms
-- (ARGV[2], see stack.lua), at least 1: PEXPIRE 0 would delete the key.
local KEYS, ARGV, min_ttl

-- written holds, during a batch (decide_batch, batches.lua), the state
-- that the batch's stacks wrote, by key: {value, ttl in ms}; order lists
-- those keys as first written. Outside a batch it is nil.
local written, order

-- start begins a run with its keys and arguments (a script passes its
-- KEYS and ARGV, a function its own).
local function start(keys, args)
  if not call then
    call, tonumber, max, min, fmod, format, match = globals()
  end
  KEYS, ARGV = keys, args
  min_ttl = max(1, tonumber(ARGV[2]) or 1)
  written, order = nil, nil
end

-- get reads the state at key (GET's reply), as the batch left it if it
-- wrote the key.
local function get(key)
  local w = written and written[key]
  if w then
    return w[1]
  end
  return call("GET", key)
end

-- put writes the state at key with a TTL of ms milliseconds (ttl_ms's
-- string). In a batch it keeps the value for flush, so that a key many
-- stacks of the batch decide (a global limit's) is written once: Redis
-- ends with the same value and TTL as after a SET per decision.
local function put(key, value, ms)
  if not written then
    call("SET", key, value, "PX", ms)
    return
  end
  local w = written[key]
  if w then
    w[1], w[2] = value, ms
  else
    written[key] = {value, ms}
    order[#order + 1] = key
  end
end

-- flush ends a batch: it writes each key the batch wrote, once.
local function flush()
  for i = 1, #order do
    local key = order[i]
    local w = written[key]
    call("SET", key, w[1], "PX", w[2])
  end
  written, order = nil, nil
end

-- int is an integer as a redis.call argument.
local function int(x)
  return format("%d", x)
end

-- algorithms maps an algorithm code to its decide function, which reads
-- and writes nothing but its own key's state:
--   decide(key, now, cost, p1, p2, p3) -> status, remaining, retry, reset, next, s1, s2, s3
-- status is 1 (allowed), 0 (denied) or -1 (cost above what the rule can ever
-- admit); remaining is what could be admitted before this request; retry,
-- reset (until the state is fresh) and next (until one more unit is
-- available; 0 when none is used) are microseconds; s1, s2, s3 are what the
-- commit needs of the state.
local algorithms = {}

-- commits maps an algorithm code to its commit function, which writes the
-- state of an admitted request and returns the reset after it, the next
-- after it and the decision's token (stamp, refunded and, for the
-- draining rules, epoch; see refunds). slot is the decision's id (0: none):
-- it names a sliding log's units, and a draining rule's state written
-- fresh (its epoch, ledger.lua). Plain functions given the state,
-- not closures: Lua would build a closure and its captured locals on
-- every decision.
--   commit(key, now, cost, p1, p2, p3, s1, s2, s3, slot) -> after, next, stamp, refunded[, epoch]
local commits = {}

-- refunds maps an algorithm code to its refund function, which gives back,
-- at now, back of the cost units that a commit at the instant `at`
-- consumed, whatever was decided on the key since: exactly for the
-- windows and the log, within the ledger's bound for the buckets and GCRA
-- (ledger.lua), exactly the turns still ahead for a queue (queue.lua),
-- never more than a commit of cost - back at `at` would have left:
--   refund(key, now, at, cost, back, stamp, refunded, epoch, p1, p2, p3, earliest)
-- at is nil when the commit's instant is unknown (its reply was lost),
-- and earliest, when not nil, the earliest it can have been: only the
-- sliding log's (and a concurrency limit's) refund gives back then, by
-- its slot id. stamp and refunded are the commit's token (the window
-- start of the fixed and sliding windows; the level, or the TAT, after
-- the commit, the ledger's refunded count and the state's epoch for
-- the draining rules; else 0). refunds is nil in decision scripts; refund scripts set it to a
-- table right after this file (refund_mode.lua), and the algorithm files
-- define their refunds only then.
local refunds

-- unknown is the error reply for an algorithm code no file registered.
local function unknown(code)
  return redis.error_reply("ratelimit: unknown algorithm " .. tostring(code))
end

-- rules keeps each rule's decoded argument, "<code>:<p1>:<p2>:<p3>" (the
-- algorithm code and its three integer parameters), as {code, p1, p2, p3}.
-- A function library keeps it between calls, so a rule is decoded once
-- (a script builds it again on each run). Rules come from the
-- application's configuration, never from a request; the table starts
-- afresh at 1024 entries all the same.
local rules, rule_count = {}, 0

-- rule decodes a rule's argument, or returns nil for a malformed one.
local function rule(arg)
  local r = rules[arg]
  if r == nil then
    local code, p1, p2, p3 = match(arg, "^(%a+):(%d+):(%d+):(%d+)$")
    if code == nil then
      return nil
    end
    r = {code, tonumber(p1), tonumber(p2), tonumber(p3)}
    if rule_count >= 1024 then
      rules, rule_count = {}, 0
    end
    rules[arg], rule_count = r, rule_count + 1
  end
  return r
end

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

-- ttl_ms is a TTL of us microseconds for PX or PEXPIRE: whole milliseconds,
-- rounded up, at least min_ttl.
local function ttl_ms(us)
  if us > min_ttl * 1000 then
    return int(cdiv(us, 1000))
  end
  return int(min_ttl)
end

-- clock is ARGV[1] as a number of µs since the Unix epoch, or the server's
-- TIME when ARGV[1] is "". It returns nil and an error reply when the
-- server refuses TIME (redis.pcall, so that the error says so).
local function clock()
  if ARGV[1] ~= "" then
    return tonumber(ARGV[1])
  end
  local t = redis.pcall("TIME")
  if t.err then
    return nil, redis.error_reply("ratelimit: TIME failed: " .. t.err)
  end
  return tonumber(t[1]) * 1000000 + tonumber(t[2])
end
