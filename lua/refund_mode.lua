-- Turns refund mode on: placed right after lib.lua in a refund script, so
-- that the algorithm files define their refund functions (see lib.lua).
-- Decision scripts leave it out and carry no refund code.
-- KEYS, ARGV: none. Reply: none.
refunds = {}
