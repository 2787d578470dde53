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
-- Expiry: the time left in the window (ms, rounded up), from the admission that starts it; the
-- count is dead by then.
--
-- Rule: windows are clock-aligned: id = floor(now / window), elapsed e = now mod window, so
-- every service agrees on the boundaries. count = n if w == id else 0. Admit iff
-- count + cost <= limit. A denied request waits for the next window (window - e); a clock that
-- went back into an older window is treated as the start of the stored one, so a count is never
-- forgotten early. Denied requests write nothing.

-- Shared helpers: kept identical in every ratescope script, so each file loads on its own. EVAL
-- runs the whole file for every request, so the hot path stays inline in decide, with few
-- helpers and no tables; the functions library runs it once and calls decide per request.
local MAX_LIMIT = 1000000000000    -- 10^12
local MIN_WINDOW = 1000            -- 1 ms
local MAX_WINDOW = 31622400000000  -- 366 days
-- 2^52 us (year 2112): now + 2 windows stays below 2^53, beyond which doubles skip integers.
local MAX_NOW = 4503599627370496

-- Lua 5.1 turns numbers into strings with %.14g, which mangles big integers; Redis's %d is
-- 64-bit.
local function fmt(n)
  return string.format('%d', n)
end

-- raw as an integer when it is decimal digits only (leading zeros allowed) and in lo..hi, else
-- nil. Strict on purpose: tonumber alone would also accept ' 5', '0x5', '5e0' and '5.5'. Past
-- 2^53 tonumber rounds, but every bound is below 2^52, so a rounded value is never in range.
local function int_in(raw, lo, hi)
  local n = tonumber(raw)
  if n and n >= lo and n <= hi and not string.find(raw, '%D') then
    return n
  end
end

local function arg_error(name, raw, lo, hi)
  local shown = raw == nil and 'nothing' or "'" .. string.sub(raw, 1, 64) .. "'"
  return redis.error_reply(string.format('ERR ratescope: %s must be an integer in %s..%s, got %s',
    name, fmt(lo), fmt(hi), shown))
end

-- Everything is validated before the first write, so a bad call leaves the key untouched.
-- Returns limit, window, cost and now (TIME only when ARGV[4] is empty), or nil and the error.
local function parse_args(KEYS, ARGV)
  if #KEYS ~= 1 then
    return nil, redis.error_reply('ERR ratescope: expected exactly 1 key, got ' .. fmt(#KEYS))
  end
  local limit = int_in(ARGV[1], 1, MAX_LIMIT)
  if not limit then return nil, arg_error('limit', ARGV[1], 1, MAX_LIMIT) end
  local window = int_in(ARGV[2], MIN_WINDOW, MAX_WINDOW)
  if not window then
    return nil, arg_error('window (microseconds)', ARGV[2], MIN_WINDOW, MAX_WINDOW)
  end
  local cost = int_in(ARGV[3], 1, limit)
  if not cost then return nil, arg_error('cost', ARGV[3], 1, limit) end
  local now = ARGV[4]
  if now == nil or now == '' then
    local time = redis.call('TIME')
    return limit, window, cost, tonumber(time[1]) * 1000000 + tonumber(time[2])
  end
  now = int_in(now, 0, MAX_NOW)
  if not now then return nil, arg_error('now (microseconds)', ARGV[4], 0, MAX_NOW) end
  return limit, window, cost, now
end

-- The first command on the key runs under redis.pcall instead of a TYPE call on every request;
-- given its error reply, the error to return. A key of another type is reported (asking TYPE
-- only then), never overwritten; any other error is raised as redis.call raises it.
local function type_error(key, reply, algo, expected)
  if string.sub(reply.err, 1, 10) ~= 'WRONGTYPE ' then error(reply) end
  return redis.error_reply(string.format("WRONGTYPE key '%s' holds a %s, %s needs a %s",
    key, redis.call('TYPE', key).ok, algo, expected))
end

-- floor(a / b) and a mod b for integers |a| < 2^53, b > 0. fmod is exact; a / b is rounded and
-- can land on the wrong side of an integer.
local function divmod(a, b)
  local r = math.fmod(a, b)
  if r < 0 then r = r + b end
  return (a - r) / b, r
end

-- Expiry in whole ms, rounded up so a key never vanishes while its state still counts.
local function ms_ceil(us)
  local q, r = divmod(us, 1000)
  if r > 0 then q = q + 1 end
  return q
end

-- One of our integer hash fields (an HMGET reply element): decimal digits only, at most 16 of
-- them, and at most hi; else nil.
local function field_in(raw, hi)
  local n = tonumber(raw)
  if n and n <= hi and #raw <= 16 and not string.find(raw, '%D') then
    return n
  end
end

-- Called when the HMGET reply `raw` of our fields `names` does not parse (field_in with
-- `maxima`): nil for a missing key, which misses every field, the first one included (only then
-- ask whether it exists); else the error naming the first bad field, for a hash this script did
-- not write, which is never overwritten.
local function state_error(key, kind, raw, names, maxima)
  for i, name in ipairs(names) do
    if not field_in(raw[i], maxima[i]) then
      if i == 1 and not raw[1] and redis.call('EXISTS', key) == 0 then return nil end
      local shown = raw[i] and "'" .. string.sub(raw[i], 1, 64) .. "'" or 'missing'
      return redis.error_reply(string.format(
        "ERR ratescope: key '%s' is not a ratescope %s (field %s is %s)",
        key, kind, name, shown))
    end
  end
end

local function decide(KEYS, ARGV)
  local limit, window, cost, now = parse_args(KEYS, ARGV)
  if not limit then return window end
  local key = KEYS[1]
  local raw = redis.pcall('HMGET', key, 'w', 'n')
  if raw.err then return type_error(key, raw, 'fixed-window', 'hash') end
  local w, n = field_in(raw[1], MAX_NOW), field_in(raw[2], MAX_LIMIT)
  if not (w and n) then
    local err = state_error(key, 'fixed window', raw, {'w', 'n'}, {MAX_NOW, MAX_LIMIT})
    if err then return err end -- else the key is missing: w and n are nil
  end
  local id, elapsed = divmod(now, window)
  local count = 0
  if w then
    if w > id then id, elapsed = w, 0 end
    if w == id then count = n end
  end
  local allowed = count + cost <= limit
  if allowed then
    if ARGV[5] ~= 'peek' then
      -- A count of the current window was written with its expiry: add to it (HINCRBY needs the
      -- canonical digits this script writes). A new window sets both fields and its expiry.
      if count > 0 and string.byte(raw[2], 1) ~= 48 then
        redis.call('HINCRBY', key, 'n', fmt(cost))
      else
        redis.call('HSET', key, 'w', fmt(id), 'n', fmt(count + cost))
        redis.call('PEXPIRE', key, fmt(ms_ceil(window - elapsed)))
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
