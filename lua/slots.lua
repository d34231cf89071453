-- Decides a batch (decide_batch, batches.lua) whose stacks' keys are in
-- several hash slots of one Redis Cluster node: the decisions that a
-- client coalesced for that node. A cluster refuses a call whose declared
-- keys span slots, so the call declares one key, which routes it, and
-- carries the batch's keys among its arguments; the function's
-- allow-cross-slot-keys flag lets it use them. A key this node does not
-- serve (its slot moved since the client looked) fails its stack alone,
-- before the stack writes anything.
-- KEYS[1]: the first stack's first key.
-- ARGV[1]: the number m of the batch's keys; ARGV[2] to ARGV[m + 1]: the
--   keys, as decide_batch takes KEYS; then decide_batch's ARGV.
-- Reply: decide_batch's.
local m = tonumber(ARGV[1])
local keys, args = {}, {}
for i = 1, m do
  keys[i] = ARGV[1 + i]
end
for i = m + 2, #ARGV do
  args[i - m - 1] = ARGV[i]
end
start(keys, args)
return decide_batch()
