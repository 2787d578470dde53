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
-- Storage: hash {w = window id, n = cost admitted in that window}; both fields always written
-- together. Expiry: one window (ms, rounded up) from each admission; the count is dead by then.
--
-- Rule: windows are clock-aligned: id = floor(now / window), elapsed e = now mod window, so
-- every service agrees on the boundaries. count = n if w == id else 0. Admit iff
-- count + cost <= limit. A denied request waits for the next window (window - e); a clock that
-- went back into an older window is treated as the start of the stored one, so a count is never
-- forgotten early. Denied requests write nothing.

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

local function decide(args)
  local key, limit, window, cost = args.key, args.limit, args.window, args.cost
  local state, err = load_state(key, 'fixed-window', 'fixed window',
    {'w', 'n'}, {MAX_NOW, MAX_LIMIT})
  if err then return err end
  local id, elapsed = divmod(args.now, window)
  local count = 0
  if state then
    if state.w > id then id, elapsed = state.w, 0 end
    if state.w == id then count = state.n end
  end
  local allowed = count + cost <= limit
  if allowed then
    count = count + cost
    if not args.peek then
      redis.call('HSET', key, 'w', fmt(id), 'n', fmt(count))
      redis.call('PEXPIRE', key, fmt(ms_ceil(window)))
    end
  end
  local retry, reset = 0, 0
  if not allowed then retry = window - elapsed end
  if count > 0 then reset = window - elapsed end
  return {allowed and 1 or 0, limit, count, math.max(0, limit - count), retry, reset}
end

local args, err = parse_args()
if err then return err end
return decide(args)
