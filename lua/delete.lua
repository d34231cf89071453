-- Deletes a client's keys for a rule (Limiter.Reset and Unblock) and, for
-- a Reset that deleted any, leaves its marks.
-- KEYS: the keys to delete, which share one hash tag, then the keys of the
-- Reset's marks, one for each of ARGV[3] on.
-- ARGV[1]: now in µs since the Unix epoch, or "" to read the server's TIME.
-- ARGV[2]: the shortest TTL in ms a written key gets (as in stack.lua).
-- ARGV[3] on: how long each mark lasts, in µs (none: no mark).
-- Reply: the number of keys deleted. Each mark is written as block.lua
-- writes a block (a longer one in place is kept), and only when a key was
-- deleted: a Reset that finds nothing writes nothing.
local marks = #ARGV - 2
local n, now = #KEYS - marks, 0
if marks > 0 then
  local err
  now, err = clock() -- before anything is deleted: no deletion without its marks
  if not now then
    return err
  end
end
local deleted = call("DEL", unpack(KEYS, 1, n))
if deleted > 0 then
  for i = 1, marks do
    extend(KEYS[n + i], now, tonumber(ARGV[2 + i]))
  end
end
return deleted
