-- ratescope sliding-counter limiter (two clock-aligned windows, the previous one weighted).
-- Redis >= 5 (embedded Lua 5.1); no shebang, so it also runs with EVAL/EVALSHA on Redis 6.
--
-- KEYS[1]  the limiter key (the only key read or written)
-- ARGV[1]  limit: integer 1..10^12, cost units admitted per window
-- ARGV[2]  window in microseconds: 1000..31622400000000 (1 ms .. 366 days)
-- ARGV[3]  cost of this request: integer 1..limit (a cost above the limit is an error, never a
--          permanent deny)
-- ARGV[4]  now in microseconds since the epoch (0..2^52), or '' to read the server clock (TIME)
--          so all writers share one clock; explicit values are for tests and replays
-- ARGV[5]  'peek': the same answer without consuming and without any write command (works with
--          EVALSHA_RO, for a read-only ACL user, on a replica); anything else: decide and consume
--
-- Reply: {allowed (1|0), limit, used, remaining, retry_after_us, reset_after_us}
--   used              weighted + curr after this decision; remaining = max(0, limit - used)
--   retry_after_us    0 when allowed, else the exact wait until this cost would be admitted if
--                     nothing else happened
--   reset_after_us    wait until used is 0 (0 if it already is)
-- Errors leave the key untouched: 'ERR ratescope: ...' for a bad argument or a hash this script
-- did not write, 'WRONGTYPE ...' when the key is not a hash.
--
-- Storage: hash {w = id of the newest window with admissions, c = its count, p = the count of
-- window w - 1}; all three always written together. Expiry: two windows (ms, rounded up) from
-- each admission, because a count keeps weighing through the following window.
--
-- Rule: id = floor(now / window), elapsed e = now mod window. curr and prev are the counts of
-- windows id and id - 1 (from c/p when w == id, prev = c when w == id - 1, else 0).
-- weighted = floor(prev * (window - e) / window), the share of the previous window that still
-- overlaps a sliding window ending now. Admit iff weighted + curr + cost <= limit. Worked
-- example: window 60 s, prev 8, curr 3, 45 s in, limit 5: 2 + 3 + 1 > 5, denied.
-- A clock that went back into an older window is treated as the start of the stored one.
-- Products reach 10^12 * 3.2 * 10^13, beyond the 2^53 of exact doubles, hence muldiv.
-- Denied requests write nothing.

-- Shared helpers: kept identical in every ratescope script, so each file loads on its own. EVAL
-- runs the whole file for every request and each function statement then builds a closure, so
-- the helpers are few and the rest is inline in decide; the functions library runs the file
-- once and calls decide per request.
local MAX_LIMIT = 1000000000000    -- 10^12
local MIN_WINDOW = 1000            -- 1 ms
local MAX_WINDOW = 31622400000000  -- 366 days
-- 2^52 us (year 2112): now + 2 windows stays below 2^53, beyond which doubles skip integers.
local MAX_NOW = 4503599627370496
-- Numbers go to Redis as string.format('%d', n): Lua 5.1 turns numbers into strings with %.14g,
-- which mangles big integers (Redis's %d is 64-bit). No aliases of string functions up here: the
-- functions library loads this top level where only redis is reachable.

-- Everything is validated before the first write, so a bad call leaves the key untouched.
-- Returns limit, window, cost and now (TIME only when ARGV[4] is empty), or nil and the error
-- reply for the first bad argument. Integers are decimal digits only (leading zeros allowed):
-- tonumber alone would also accept ' 5', '0x5', '5e0' and '5.5'. Past 2^53 tonumber rounds,
-- but every bound is below 2^53, so a rounded value is never in range.
local function parse_args(KEYS, ARGV)
  local limit, window, cost, now = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), 0
  local clock = ARGV[4] == nil or ARGV[4] == ''
  if not clock then now = tonumber(ARGV[4]) end
  if #KEYS == 1 and limit and window and cost and now and limit >= 1 and limit <= MAX_LIMIT
      and window >= MIN_WINDOW and window <= MAX_WINDOW and cost >= 1 and cost <= limit
      and now <= MAX_NOW and not string.find(ARGV[1], '%D') and not string.find(ARGV[2], '%D')
      and not string.find(ARGV[3], '%D') and (clock or not string.find(ARGV[4], '%D')) then
    if clock then
      local time = redis.call('TIME')
      now = tonumber(time[1]) * 1000000 + tonumber(time[2])
    end
    return limit, window, cost, now
  end
  if #KEYS ~= 1 then
    return nil, redis.error_reply('ERR ratescope: expected exactly 1 key, got '
      .. string.format('%d', #KEYS))
  end
  local names = {'limit', 'window (microseconds)', 'cost', 'now (microseconds)'}
  local bounds = {1, MAX_LIMIT, MIN_WINDOW, MAX_WINDOW, 1, limit, 0, MAX_NOW}
  for i = 1, 4 do
    local raw, lo, hi = ARGV[i], bounds[2 * i - 1], bounds[2 * i]
    local n = tonumber(raw)
    if not (n and n >= lo and n <= hi and not string.find(raw, '%D')) then
      local shown = raw == nil and 'nothing' or "'" .. string.sub(raw, 1, 64) .. "'"
      return nil, redis.error_reply(string.format(
        'ERR ratescope: %s must be an integer in %s..%s, got %s',
        names[i], string.format('%d', lo), string.format('%d', hi), shown))
    end
  end
end

-- floor(a / b) and a mod b for integers |a| < 2^53, b > 0. fmod is exact; a / b is rounded and
-- can land on the wrong side of an integer.
local function divmod(a, b)
  local r = math.fmod(a, b)
  if r < 0 then r = r + b end
  return (a - r) / b, r
end

-- floor(a * b / c) and (a * b) mod c, exactly, for 0 <= a, b < 2^53 and 1 <= c < 2^45 (the
-- quotient itself must stay below 2^53). Below 2^53 the product is exact and one fmod does. Above,
-- a * b can reach 2^106, so it is not used: with b = bq * c + br, a * b / c = a * bq + a * br / c,
-- and a * br is divided by c taking a one byte at a time from the top. The remainder r stays
-- below c < 2^45, so r * 256 and r + byte * br both stay below 2^53.
local function muldiv(a, b, c)
  local p = a * b
  if p >= 0 and p < 9007199254740992 then
    local r = math.fmod(p, c)
    return (p - r) / c, r
  end
  local bq, br = divmod(b, c)
  local bytes, rest = {}, a
  while rest > 0 do
    local byte
    rest, byte = divmod(rest, 256)
    bytes[#bytes + 1] = byte
  end
  local q, r = 0, 0
  for i = #bytes, 1, -1 do
    local hq, hr = divmod(r * 256, c)
    local lq, lr = divmod(hr + bytes[i] * br, c)
    q, r = q * 256 + hq + lq, lr
  end
  return a * bq + q, r
end

-- One of our integer hash fields (an HMGET reply element): decimal digits only, at most 16 of
-- them, and at most hi; else nil.
local function field_in(raw, hi)
  local n = tonumber(raw)
  if n and n <= hi and #raw <= 16 and not string.find(raw, '%D') then
    return n
  end
end

local function ceil_muldiv(a, b, c)
  local q, r = muldiv(a, b, c)
  if r > 0 then q = q + 1 end
  return q
end

-- Waiting x us lowers weighted to floor(prev * y / window) with y = x0 - x left in this window,
-- which is <= k iff y <= ceil((k + 1) * window / prev) - 1. Next window: prev' = curr, curr' = 0.
local function retry_after(limit, window, cost, curr, prev, x0)
  local k = limit - curr - cost
  if k >= 0 and prev > 0 then
    local ymax = ceil_muldiv(k + 1, window, prev) - 1
    if ymax >= 1 then return x0 - ymax end
  end
  if curr + cost <= limit then return x0 end
  return x0 + window - (ceil_muldiv(limit - cost + 1, window, curr) - 1)
end

-- Same reasoning with "weighted + curr == 0" as the goal.
local function reset_after(window, curr, prev, x0)
  if curr > 0 then return x0 + window - (ceil_muldiv(1, window, curr) - 1) end
  if prev > 0 then return math.max(0, x0 - (ceil_muldiv(1, window, prev) - 1)) end
  return 0
end

local function decide(KEYS, ARGV)
  local limit, window, cost, now = parse_args(KEYS, ARGV)
  if not limit then return window end
  local key = KEYS[1]
  -- The first command on the key runs under redis.pcall instead of a TYPE call on every request.
  local raw = redis.pcall('HMGET', key, 'w', 'c', 'p')
  if raw.err then -- another type is reported (asking TYPE only then), never overwritten
    if string.sub(raw.err, 1, 10) ~= 'WRONGTYPE ' then error(raw) end
    return redis.error_reply(string.format(
      "WRONGTYPE key '%s' holds a %s, sliding-counter needs a hash",
      key, redis.call('TYPE', key).ok))
  end
  local w, c, p = field_in(raw[1], MAX_NOW), field_in(raw[2], MAX_LIMIT),
    field_in(raw[3], MAX_LIMIT)
  -- A missing key misses every field, the first one included: only then ask whether it exists.
  -- A hash this script did not write is reported, never overwritten.
  if not (w and c and p) and (raw[1] or redis.call('EXISTS', key) == 1) then
    local name, shown = 'w', raw[1]
    if w then name, shown = 'c', raw[2] end
    if w and c then name, shown = 'p', raw[3] end
    shown = shown and "'" .. string.sub(shown, 1, 64) .. "'" or 'missing'
    return redis.error_reply(string.format(
      "ERR ratescope: key '%s' is not a ratescope sliding counter (field %s is %s)",
      key, name, shown))
  end
  local elapsed = math.fmod(now, window)
  local id = (now - elapsed) / window
  local curr, prev = 0, 0
  if w then
    if w > id then id, elapsed = w, 0 end
    if w == id then
      curr, prev = c, p
    elseif w == id - 1 then
      prev = c
    end
  end
  local x0 = window - elapsed
  local weighted = muldiv(prev, x0, window)
  local allowed = weighted + curr + cost <= limit
  local retry = 0
  if allowed then
    curr = curr + cost
    if ARGV[5] ~= 'peek' then
      redis.call('HSET', key, 'w', string.format('%d', id), 'c', string.format('%d', curr),
        'p', string.format('%d', prev))
      redis.call('PEXPIRE', key, string.format('%d', math.ceil(2 * window / 1000)))
    end
  else
    retry = retry_after(limit, window, cost, curr, prev, x0)
  end
  local used = weighted + curr
  return {allowed and 1 or 0, limit, used, math.max(0, limit - used), retry,
          reset_after(window, curr, prev, x0)}
end

-- EVAL runs this file for every request: decide now. The functions library runs it once, with
-- no KEYS, and registers the decide it returns (tools/function-library.cmake).
if KEYS then return decide(KEYS, ARGV) end
return decide
