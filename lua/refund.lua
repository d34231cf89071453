-- Gives back what stack.lua consumed for some rules, all or part of it: the
-- second half of the consume-then-refund protocol for a stack whose keys
-- span Redis Cluster slots (one stack.lua run per slot; if any denies, the
-- others refund), and the settlement of a cost known after the response.
-- Each refund returns at most what a smaller decision at the original
-- instant would have left (see refunds in lib.lua), and nothing when an
-- operator's Reset forgot the state since the decision.
-- KEYS[2i-1], KEYS[2i]: the state key of rule i and the key of the mark
--   a Reset of its rule and identity leaves (delete.lua writes it, with
--   mark.lua's extend: the Reset's instant plus the mark's TTL).
-- ARGV[1]: now in µs since the Unix epoch, or "" to read the server's TIME.
-- ARGV[2]: the shortest TTL in ms a written key gets (as in stack.lua).
-- ARGV[3]: the instant of the decision, in µs, that stack.lua reported;
--   "" when it is unknown (the decision's reply was lost): then only a
--   sliding log's or a concurrency limit's units that the decision's slot
--   id names are given back, wherever they are, and no mark is read (a
--   Reset deleted the units it forgot).
-- ARGV[REFUND_ARGS_HEAD + 1 + REFUND_ARGS_PER_RULE*(i-1) ...]: rule i (as
--   in stack.lua), the cost it was decided at, the units to give back, the
--   token stack.lua returned for it (stamp, refunded, epoch), and the mark's TTL
--   in µs ("" when there is no mark to read: KEYS[2i] is then unread): a
--   mark whose end less that TTL, the Reset's instant, is at or after
--   the decision voids the refund; and, for an unknown instant, how long
--   in µs before now the decision ran at most ("" for no bound): older
--   units are not looked at.
-- Reply: the number of rules refunded.
local now, err = clock()
if not now then
  return err
end
local at = tonumber(ARGV[3])
local n = 0
for i = 1, #KEYS / 2 do
  local a = REFUND_ARGS_HEAD + 1 + REFUND_ARGS_PER_RULE * (i - 1)
  local r = rule(ARGV[a])
  local refund = r and refunds[r[1]]
  if refund == nil then
    return unknown(ARGV[a])
  end
  local mark_ttl, reset = ARGV[a + 6], nil
  if at and mark_ttl ~= "" then
    reset = tonumber(call("GET", KEYS[2 * i]))
  end
  if at and (not reset or at > reset - tonumber(mark_ttl)) or not at and (r[1] == "sl" or r[1] == "cc") then
    local within = tonumber(ARGV[a + 7])
    refund(KEYS[2 * i - 1], now, at, tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2]), tonumber(ARGV[a + 3]), tonumber(ARGV[a + 4]), tonumber(ARGV[a + 5]), r[2], r[3], r[4], within and now - within)
    n = n + 1
  end
end
return n
