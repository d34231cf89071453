-- Decides several independent stacks in one run (decide_batch, batches.lua):
-- one run instead of one per stack spares Redis the per-call work (the
-- command, the arguments' tables, TIME, the reply) for all but one of them.
-- KEYS and ARGV: decide_batch's.
-- Reply: decide_batch's, one entry per stack.
return decide_batch()
