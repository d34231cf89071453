-- The verdict shared by GCRA and the meter (token and leaky buckets), which
-- all keep a level of points that drains: included only in scripts whose
-- stacks use one of them (before meter.lua).
-- KEYS, ARGV: none. Reply: verdict returns the first three values of a
-- decide function (see lib.lua); next_unit its next; carry those of a
-- decision against a level another plan wrote.

-- verdict decides cost units against level, in points: a unit is period
-- points, the level drains rate points per microsecond and holds at most
-- size units. It returns status (1 allowed, 0 denied, -1 cost above size),
-- the units remaining before the request, and the wait in microseconds
-- until the cost fits (0 now, -1 never).
-- next_unit is the wait in microseconds until one more unit fits such a
-- level (0 when it is empty).
local function next_unit(level, size, rate, period)
  if level <= 0 then
    return 0
  end
  local cap = size * period
  return cdiv(level - cap + (idiv(max(0, cap - level), period) + 1) * period, rate)
end

local function verdict(level, cost, size, rate, period)
  local cap = size * period
  local remaining = idiv(max(0, cap - level), period)
  if cost > size then
    return -1, remaining, -1
  end
  local need = cost * period
  if level + need > cap then
    return 0, remaining, cdiv(level + need - cap, rate)
  end
  return 1, remaining, 0
end

-- carry is model.carry: the verdict on cost under a plan of size units
-- against a level (points) that another plan (rate0, period0) wrote and
-- drains rate0 points per µs. Its units in use are rounded up. It returns
-- status, remaining and retry as verdict does, next (until one unit less
-- is in use, or fewer than size, at rate0) and the units in use that
-- carry over, at most size.
local function carry(level, cost, size, rate0, period0)
  local used = cdiv(level, period0)
  local status, retry = 1, 0
  if cost > size then
    status, retry = -1, -1
  elseif used + cost > size then
    status, retry = 0, cdiv(level - (size - cost) * period0, rate0)
  end
  local next = 0
  if level > 0 then
    next = cdiv(level - (min(used, size) - 1) * period0, rate0)
  end
  return status, max(0, size - used), retry, next, min(used, size)
end
