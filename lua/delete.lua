-- Deletes a client's keys for a rule (Limiter.Reset and Unblock) and, for
-- a Reset that deleted any, leaves its mark.
-- KEYS: the keys to delete, which share one hash tag, then, when ARGV[3]
-- is not 0, the key of the Reset's mark.
-- ARGV[1]: now in µs since the Unix epoch, or "" to read the server's TIME.
-- ARGV[2]: the shortest TTL in ms a written key gets (as in stack.lua).
-- ARGV[3]: how long the mark lasts, in µs, or 0 for none.
-- Reply: the number of keys deleted. The mark is written as block.lua
-- writes a block (a longer one in place is kept), and only when a key was
-- deleted: a Reset that finds nothing writes nothing.
local span = tonumber(ARGV[3])
local n, now = #KEYS, 0
if span > 0 then
  local err
  now, err = clock() -- before anything is deleted: no deletion without its mark
  if not now then
    return err
  end
  n = n - 1
end
local deleted = call("DEL", unpack(KEYS, 1, n))
if span > 0 and deleted > 0 then
  extend(KEYS[#KEYS], now, span)
end
return deleted
