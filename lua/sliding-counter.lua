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

local function ceil_muldiv(a, b, c)
  local q, r = muldiv(a, b, c)
  if r > 0 then q = q + 1 end
  return q
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

local function decide(args)
  local key, limit, window, cost = args.key, args.limit, args.window, args.cost
  local state, err = load_state(key, 'sliding-counter', 'sliding counter',
    {'w', 'c', 'p'}, {MAX_NOW, MAX_LIMIT, MAX_LIMIT})
  if err then return err end
  local id, elapsed = divmod(args.now, window)
  local curr, prev = 0, 0
  if state then
    if state.w > id then id, elapsed = state.w, 0 end
    if state.w == id then
      curr, prev = state.c, state.p
    elseif state.w == id - 1 then
      prev = state.c
    end
  end
  local x0 = window - elapsed
  local weighted = muldiv(prev, x0, window)
  local allowed = weighted + curr + cost <= limit
  local retry = 0
  if allowed then
    curr = curr + cost
    if not args.peek then
      redis.call('HSET', key, 'w', fmt(id), 'c', fmt(curr), 'p', fmt(prev))
      redis.call('PEXPIRE', key, fmt(ms_ceil(2 * window)))
    end
  else
    retry = retry_after(limit, window, cost, curr, prev, x0)
  end
  local used = weighted + curr
  return {allowed and 1 or 0, limit, used, math.max(0, limit - used), retry,
          reset_after(window, curr, prev, x0)}
end

local args, err = parse_args()
if err then return err end
return decide(args)
