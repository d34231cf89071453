-- Blocks a client for a rule: the rule denies it until the block ends (see
-- the block keys of stack.lua), on every instance.
-- KEYS[1]: the block key of the rule and identity.
-- ARGV[1]: now in µs since the Unix epoch, or "" to read the server's TIME.
-- ARGV[2]: the shortest TTL in ms a written key gets (as in stack.lua).
-- ARGV[3]: how long the block lasts, in µs (> 0).
-- Reply: the end of the block, in µs since the Unix epoch. A longer block
-- already in place is kept.
local now, err = clock()
if not now then
  return err
end
return extend(KEYS[1], now, tonumber(ARGV[3]))
