-- Deletes a client's keys for a rule (Limiter.Reset and Unblock) and, for
-- a Reset that deleted any, leaves its marks.
-- KEYS: the keys to delete, which share one hash tag, then the keys of the
-- Reset's marks, one for each pair of ARGV from ARGV[3] on: the mark of
-- the i-th pair marks the state at KEYS[i].
-- ARGV[1]: now in µs since the Unix epoch, or "" to read the server's TIME.
-- ARGV[2]: the shortest TTL in ms a written key gets (as in stack.lua).
-- ARGV[3] on, in pairs: how long the mark lasts, in µs (0: no mark), and
-- "s" when it ends no later than the state it marks would have ("" not).
-- Reply: the number of keys deleted. Each mark is written as block.lua
-- writes a block (a later end in place is kept), and only when a key was
-- deleted: a Reset that finds nothing writes nothing. A mark that ends
-- with its state lives as long as the state had left (PTTL), or as long
-- as one in place does; for a state that was not there it is not written.
local marks = (#ARGV - 2) / 2
local n, now = #KEYS - marks, 0
local lives = {}
if marks > 0 then
  local err
  now, err = clock() -- before anything is deleted: no deletion without its marks
  if not now then
    return err
  end
  for i = 1, marks do
    if ARGV[2 + 2 * i] == "s" then
      lives[i] = call("PTTL", KEYS[i]) -- -2: no state; -1: no TTL, the mark's own
    end
  end
end
local deleted = call("DEL", unpack(KEYS, 1, n))
if deleted > 0 then
  for i = 1, marks do
    local d, life = tonumber(ARGV[1 + 2 * i]), lives[i]
    if d > 0 and life ~= -2 then
      extend(KEYS[n + i], now, d, life ~= -1 and life or nil)
    end
  end
end
return deleted
