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

-- Shared helpers: kept identical in every ratescope script, so each file loads on its own.
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

local function arg_error(name, raw, lo, hi)
  local shown = raw == nil and 'nothing' or "'" .. string.sub(raw, 1, 64) .. "'"
  return redis.error_reply(string.format('ERR ratescope: %s must be an integer in %s..%s, got %s',
    name, fmt(lo), fmt(hi), shown))
end

-- Strict on purpose: tonumber would also accept ' 5', '0x5', '5e0' and '5.5'.
local function int_arg(name, raw, lo, hi)
  local digits = type(raw) == 'string' and string.match(raw, '^0*(%d+)$')
  local n = digits and #digits <= 16 and tonumber(digits)
  if n and n >= lo and n <= hi then
    return n
  end
  return nil, arg_error(name, raw, lo, hi)
end

local function server_now()
  local time = redis.call('TIME')
  return tonumber(time[1]) * 1000000 + tonumber(time[2])
end

-- Everything is validated before the first write, so a bad call leaves the key untouched.
local function parse_args()
  if #KEYS ~= 1 then
    return nil, redis.error_reply('ERR ratescope: expected exactly 1 key, got ' .. fmt(#KEYS))
  end
  local limit, window, cost, now, err
  limit, err = int_arg('limit', ARGV[1], 1, MAX_LIMIT)
  if err then return nil, err end
  window, err = int_arg('window (microseconds)', ARGV[2], MIN_WINDOW, MAX_WINDOW)
  if err then return nil, err end
  cost, err = int_arg('cost', ARGV[3], 1, limit)
  if err then return nil, err end
  if ARGV[4] == nil or ARGV[4] == '' then
    now = server_now()
  else
    now, err = int_arg('now (microseconds)', ARGV[4], 0, MAX_NOW)
    if err then return nil, err end
  end
  return {key = KEYS[1], limit = limit, window = window, cost = cost, now = now,
          peek = ARGV[5] == 'peek'}
end

-- The first command on the key runs under redis.pcall instead of a TYPE call on every request: a
-- key of another type is reported (asking TYPE only then), never overwritten; any other error is
-- raised as redis.call raises it.
local function first_read(key, expected, algo, ...)
  local reply = redis.pcall(...)
  if type(reply) == 'table' and reply.err then
    if string.sub(reply.err, 1, 10) ~= 'WRONGTYPE ' then error(reply) end
    return nil, redis.error_reply(string.format("WRONGTYPE key '%s' holds a %s, %s needs a %s",
      key, redis.call('TYPE', key).ok, algo, expected))
  end
  return reply
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

-- Reads our integer hash fields with HMGET, the first command on the key: nil state for a
-- missing key; an error for another type or a hash this script did not write (fields missing or
-- not integers), which is never overwritten.
local function load_state(key, algo, kind, names, maxima)
  local raw, err = first_read(key, 'hash', algo, 'HMGET', key, unpack(names))
  if err then return nil, err end
  local state = {}
  for i, name in ipairs(names) do
    local digits = raw[i] and string.match(raw[i], '^%d+$')
    local n = digits and #digits <= 16 and tonumber(digits)
    if not n or n > maxima[i] then
      -- A missing key misses every field, the first one included: only then ask whether it exists.
      if i == 1 and not raw[1] and redis.call('EXISTS', key) == 0 then return nil end
      local shown = raw[i] and "'" .. string.sub(raw[i], 1, 64) .. "'" or 'missing'
      return nil, redis.error_reply(string.format(
        "ERR ratescope: key '%s' is not a ratescope %s (field %s is %s)",
        key, kind, name, shown))
    end
    state[name] = n
  end
  return state
end

local function refill(tk, fr, elapsed, limit, window)
  -- A whole window refills any bucket; the cut also keeps the muldiv quotient below limit.
  if elapsed >= window then return limit, 0 end
  local q, r = muldiv(elapsed, limit, window)
  tk, fr = tk + q, fr + r
  if fr >= window then tk, fr = tk + 1, fr - window end
  if tk >= limit then return limit, 0 end
  return tk, fr
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

local function decide(args)
  local key, limit, window, cost, now = args.key, args.limit, args.window, args.cost, args.now
  local state, err = load_state(key, 'token-bucket', 'token bucket',
    {'tk', 'fr', 'ts'}, {MAX_LIMIT, MAX_WINDOW, MAX_NOW})
  if err then return err end
  local tk, fr = limit, 0
  if state then
    if state.ts > now then now = state.ts end
    tk, fr = state.tk, state.fr
    if fr >= window then fr = 0 end
    tk, fr = refill(tk, fr, now - state.ts, limit, window)
  end
  local allowed = tk >= cost
  local retry = 0
  if allowed then
    tk = tk - cost
    if not args.peek then
      redis.call('HSET', key, 'tk', fmt(tk), 'fr', fmt(fr), 'ts', fmt(now))
      redis.call('PEXPIRE', key, fmt(ms_ceil(window)))
    end
  else
    retry = time_to(cost, tk, fr, limit, window)
  end
  return {allowed and 1 or 0, limit, limit - tk, tk, retry, time_to(limit, tk, fr, limit, window)}
end

local args, err = parse_args()
if err then return err end
return decide(args)
