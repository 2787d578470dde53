-- ratescope token-bucket limiter. Redis >= 5 (embedded Lua 5.1); no shebang, so it also runs
-- with EVAL/EVALSHA on Redis 6.
--
-- KEYS[1]  the limiter key (the only key read or written)
-- ARGV[1]  limit: integer 1..10^12, the bucket's capacity, refilled over one window
-- ARGV[2]  window in microseconds: 1000..31622400000000 (1 ms .. 366 days)
-- ARGV[3]  cost of this request: integer 1..limit (a cost above the limit is an error, never a
--          permanent deny)
-- ARGV[4]  now in microseconds since the epoch (0..2^52), or '' to read the server clock (TIME)
--          so all writers share one clock; explicit values are for tests and replays
-- ARGV[5]  'peek': the same answer without consuming and without any write command (works with
--          EVALSHA_RO, for a read-only ACL user, on a replica); anything else: decide and consume
--
-- Reply: {allowed (1|0), limit, used, remaining, retry_after_us, reset_after_us}
--   remaining         whole tokens in the bucket after this decision; used = limit - remaining
--   retry_after_us    0 when allowed, else the exact wait until the bucket holds this cost
--   reset_after_us    wait until the bucket is full (0 if it is)
-- Errors leave the key untouched: 'ERR ratescope: ...' for a bad argument or a hash this script
-- did not write, 'WRONGTYPE ...' when the key is not a hash.
--
-- Storage: hash {tk = whole tokens, fr = fraction of a token in units of 1/window token
-- (0..window-1), ts = time of that level in us}; all three always written together. Keeping
-- the fraction makes refills exact however often the key is hit: no rounding ever leaks
-- or invents tokens. No key = a full bucket. Expiry: one window (ms, rounded up) from each
-- admission; a bucket left alone that long is full again, exactly like a missing key.
--
-- Rule: the bucket refills continuously at limit tokens per window, up to limit. Over
-- d = now - ts us it gains d * limit / window tokens: (q, r) = muldiv(d, limit, window),
-- tk += q, fr += r, carrying whole tokens; a full bucket drops its fraction. Admit iff tk >= cost,
-- then tk -= cost and ts = now. A clock that went back (now < ts) refills nothing and keeps ts.
-- Denied requests write nothing. After a change of window the stored fraction is read in the
-- new unit; one that would be worth a whole token is dropped.

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

-- us until tk + fr / window reaches `want` tokens at limit tokens per window:
-- ceil(((want - tk) * window - fr) / limit), with the product kept exact by muldiv.
local function time_to(want, tk, fr, limit, window)
  if tk >= want then return 0 end
  local q, r = muldiv(want - tk, window, limit)
  local extra_q, extra_r = divmod(r - fr, limit)
  if extra_r > 0 then extra_q = extra_q + 1 end
  return q + extra_q
end

local function decide(KEYS, ARGV)
  local limit, window, cost, now = parse_args(KEYS, ARGV)
  if not limit then return window end
  local key = KEYS[1]
  -- The first command on the key runs under redis.pcall instead of a TYPE call on every request.
  local raw = redis.pcall('HMGET', key, 'tk', 'fr', 'ts')
  if raw.err then -- another type is reported (asking TYPE only then), never overwritten
    if string.sub(raw.err, 1, 10) ~= 'WRONGTYPE ' then error(raw) end
    return redis.error_reply(string.format(
      "WRONGTYPE key '%s' holds a %s, token-bucket needs a hash",
      key, redis.call('TYPE', key).ok))
  end
  local tk, fr, ts = field_in(raw[1], MAX_LIMIT), field_in(raw[2], MAX_WINDOW),
    field_in(raw[3], MAX_NOW)
  -- A missing key misses every field, the first one included: only then ask whether it exists.
  -- A hash this script did not write is reported, never overwritten.
  if not (tk and fr and ts) and (raw[1] or redis.call('EXISTS', key) == 1) then
    local name, shown = 'tk', raw[1]
    if tk then name, shown = 'fr', raw[2] end
    if tk and fr then name, shown = 'ts', raw[3] end
    shown = shown and "'" .. string.sub(shown, 1, 64) .. "'" or 'missing'
    return redis.error_reply(string.format(
      "ERR ratescope: key '%s' is not a ratescope token bucket (field %s is %s)",
      key, name, shown))
  end
  if not tk then
    tk, fr = limit, 0 -- a missing key is a full bucket
  else
    if ts > now then now = ts end
    if fr >= window then fr = 0 end
    -- Refill over now - ts; a whole window refills any bucket, and the cut also keeps the muldiv
    -- quotient below limit.
    if now - ts >= window then
      tk, fr = limit, 0
    else
      local q, r = muldiv(now - ts, limit, window)
      tk, fr = tk + q, fr + r
      if fr >= window then tk, fr = tk + 1, fr - window end
      if tk >= limit then tk, fr = limit, 0 end
    end
  end
  local allowed = tk >= cost
  local retry = 0
  if allowed then
    tk = tk - cost
    if ARGV[5] ~= 'peek' then
      redis.call('HSET', key, 'tk', string.format('%d', tk), 'fr', string.format('%d', fr),
        'ts', string.format('%d', now))
      redis.call('PEXPIRE', key, string.format('%d', math.ceil(window / 1000)))
    end
  else
    retry = time_to(cost, tk, fr, limit, window)
  end
  return {allowed and 1 or 0, limit, limit - tk, tk, retry, time_to(limit, tk, fr, limit, window)}
end

-- EVAL runs this file for every request: decide now. The functions library runs it once, with
-- no KEYS, and registers the decide it returns (tools/function-library.cmake).
if KEYS then return decide(KEYS, ARGV) end
return decide
