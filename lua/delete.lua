-- Deletes a client's keys for a rule (Limiter.Reset and Unblock).
-- KEYS: the keys, which share one hash tag.
-- ARGV: none read.
-- Reply: the number of keys deleted.
return call("DEL", unpack(KEYS))
