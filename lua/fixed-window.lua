-- ratescope fixed-window limiter. Redis >= 5 (embedded Lua 5.1); no shebang, so it also runs
-- with EVAL/EVALSHA on Redis 6.
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
--   used, remaining   after this decision; remaining = max(0, limit - used)
--   retry_after_us    0 when allowed, else the exact wait until this cost would be admitted if
--                     nothing else happened
--   reset_after_us    wait until used is 0 (0 if it already is)
-- Errors leave the key untouched: 'ERR ratescope: ...' for a bad argument or a hash this script
-- did not write, 'WRONGTYPE ...' when the key is not a hash.
--
-- Storage: hash {w = window id, n = cost admitted in that window}. The first admission of a
-- window writes both fields and sets the expiry; later ones in that window add to n (HINCRBY).
-- Expiry: the time left in the window plus one more window (ms, rounded up), from the admission
-- that starts it: the count is dead by then, and a replay at an explicit now that runs slower
-- than the server's clock still finds it while its window lasts.
--
-- Rule: windows are clock-aligned: id = floor(now / window), elapsed e = now mod window, so
-- every service agrees on the boundaries. count = n if w == id else 0. Admit iff
-- count + cost <= limit. A denied request waits for the next window (window - e); a clock that
-- went back into an older window is treated as the start of the stored one, so a count is never
-- forgotten early. Denied requests write nothing.

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

-- One of our integer hash fields (an HMGET reply element): decimal digits only, at most 16 of
-- them, and at most hi; else nil.
local function field_in(raw, hi)
  local n = tonumber(raw)
  if n and n <= hi and #raw <= 16 and not string.find(raw, '%D') then
    return n
  end
end

local function decide(KEYS, ARGV)
  local limit, window, cost, now = parse_args(KEYS, ARGV)
  if not limit then return window end
  local key = KEYS[1]
  -- The first command on the key runs under redis.pcall instead of a TYPE call on every request.
  local raw = redis.pcall('HMGET', key, 'w', 'n')
  if raw.err then -- another type is reported (asking TYPE only then), never overwritten
    if string.sub(raw.err, 1, 10) ~= 'WRONGTYPE ' then error(raw) end
    return redis.error_reply(string.format(
      "WRONGTYPE key '%s' holds a %s, fixed-window needs a hash",
      key, redis.call('TYPE', key).ok))
  end
  local w, n = field_in(raw[1], MAX_NOW), field_in(raw[2], MAX_LIMIT)
  -- A missing key misses every field, the first one included: only then ask whether it exists.
  -- A hash this script did not write is reported, never overwritten.
  if not (w and n) and (raw[1] or redis.call('EXISTS', key) == 1) then
    local name, shown = 'w', raw[1]
    if w then name, shown = 'n', raw[2] end
    shown = shown and "'" .. string.sub(shown, 1, 64) .. "'" or 'missing'
    return redis.error_reply(string.format(
      "ERR ratescope: key '%s' is not a ratescope fixed window (field %s is %s)",
      key, name, shown))
  end
  local elapsed = math.fmod(now, window)
  local id = (now - elapsed) / window
  local count = 0
  if w then
    if w > id then id, elapsed = w, 0 end
    if w == id then count = n end
  end
  local allowed = count + cost <= limit
  if allowed then
    if ARGV[5] ~= 'peek' then
      -- A count of the current window was written with its expiry: add to it (HINCRBY needs the
      -- canonical digits this script writes). A new window sets both fields and its expiry: the
      -- time left in it and one more window, in ms rounded up (exact: the division is off by far
      -- less than 1/1000).
      if count > 0 and string.byte(raw[2], 1) ~= 48 then
        redis.call('HINCRBY', key, 'n', string.format('%d', cost))
      else
        redis.call('HSET', key, 'w', string.format('%d', id),
          'n', string.format('%d', count + cost))
        redis.call('PEXPIRE', key, string.format('%d', math.ceil((2 * window - elapsed) / 1000)))
      end
    end
    count = count + cost
  end
  local retry, reset = 0, 0
  if not allowed then retry = window - elapsed end
  if count > 0 then reset = window - elapsed end
  return {allowed and 1 or 0, limit, count, math.max(0, limit - count), retry, reset}
end

-- EVAL runs this file for every request: decide now. The functions library runs it once, with
-- no KEYS, and registers the decide it returns (tools/function-library.cmake).
if KEYS then return decide(KEYS, ARGV) end
return decide
