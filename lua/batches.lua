-- Defines decide_batch, the decision of several independent stacks in one
-- run, for the library's batch functions (batch.lua, slots.lua): the
-- decisions that a client coalesced, each decided as stack.lua decides it
-- (all-or-nothing, at its own instant or the run's), one after the other.
-- KEYS: each stack's keys as stack.lua takes them (state keys, then block
--   keys), stack after stack.
-- ARGV[1]: "" (the server's TIME is read once, for the stacks that carry
--   no instant of their own). ARGV[2]: the minimum TTL, as in stack.lua,
--   for every stack. ARGV[3]: the number of stacks. Then for each stack:
--   its instant (its stack.lua ARGV[1]: µs, or "" for the server's TIME),
--   the number of its rules n, then its rules' arguments as in stack.lua
--   (ARGS_PER_RULE each).
-- Reply: decide_batch returns one entry per stack, in order: its stack.lua
--   reply, or an error reply when it failed (the stacks before and after
--   it are decided all the same). A stack that fails on a key fails on its
--   first read, before it writes anything: its keys share a hash slot.
-- State a stack writes is kept until every stack is decided (put and get,
-- lib.lua) and then written once per key, with the TTL of its last
-- decision: a later stack reads its own key as an earlier one left it.

local function decide_batch()
  local server_now, err -- TIME, read once, when a stack carries no instant
  local replies = {}
  written, order = {}, {} -- each key's state is written once, by flush
  local k, a = 0, 3
  for j = 1, tonumber(ARGV[3]) do
    local now = tonumber(ARGV[a + 1])
    if not now then
      if not server_now and not err then
        server_now, err = clock()
      end
      now = server_now
    end
    local n = tonumber(ARGV[a + 2])
    if now then
      local ok, reply, bad = pcall(decide_stack, now, k, a + 2, n)
      if not ok then
        reply = reply.err and reply or redis.error_reply(tostring(reply))
      end
      replies[j] = reply or bad
    else
      replies[j] = err
    end
    k = k + stack_keys(a + 2, n)
    a = a + 2 + ARGS_PER_RULE * n
  end
  flush()
  return replies
end
