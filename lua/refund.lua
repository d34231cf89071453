-- Gives back what stack.lua consumed for some rules, all or part of it: the
-- second half of the consume-then-refund protocol for a stack whose keys
-- span Redis Cluster slots (one stack.lua run per slot; if any denies, the
-- others refund), and the settlement of a cost known after the response.
-- KEYS[i]: the state key of rule i.
-- ARGV[1]: the now, in µs, that stack.lua reported for the consume.
-- ARGV[2]: the shortest TTL in ms a written key gets (as in stack.lua).
-- ARGV[ARGS_HEAD + 1 + REFUND_ARGS_PER_RULE*(i-1) ...]: rule i (as in
--   stack.lua), the units to give back, and the token stack.lua returned
--   (for GCRA, the TAT increment of those units).
-- Reply: the number of rules refunded.
local now = tonumber(ARGV[1])
for i = 1, #KEYS do
  local a = ARGS_HEAD + 1 + REFUND_ARGS_PER_RULE * (i - 1)
  local r = rule(ARGV[a])
  local refund = r and refunds[r[1]]
  if refund == nil then
    return unknown(ARGV[a])
  end
  refund(KEYS[i], now, tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2]), r[2], r[3], r[4])
end
return #KEYS
