-- ratescope sliding-log limiter (one sorted-set entry per admitted request). Redis >= 5
-- (embedded Lua 5.1); no shebang, so it also runs with EVAL/EVALSHA on Redis 6.
--
-- KEYS[1]  the limiter key (the only key read or written)
-- ARGV[1]  limit: integer 1..10^12, cost units admitted per sliding window
-- ARGV[2]  window in microseconds: 1000..31622400000000 (1 ms .. 366 days)
-- ARGV[3]  cost of this request: integer 1..limit (a cost above the limit is an error, never a
--          permanent deny)
-- ARGV[4]  now in microseconds since the epoch (0..2^52), or '' to read the server clock (TIME)
--          so all writers share one clock; explicit values are for tests and replays
-- ARGV[5]  'peek': the same answer without consuming and without any write command (works with
--          EVALSHA_RO, for a read-only ACL user, on a replica); anything else: decide and consume
--
-- Reply: {allowed (1|0), limit, used, remaining, retry_after_us, reset_after_us}
--   used              total cost of the entries in the window after this decision;
--                     remaining = max(0, limit - used)
--   retry_after_us    0 when allowed, else the exact wait until enough entries expire for this cost
--   reset_after_us    wait until every entry has expired (0 if none is in the window)
-- Errors leave the key untouched: 'ERR ratescope: ...' for a bad argument or a sorted set this
-- script did not write, 'WRONGTYPE ...' when the key is not a sorted set.
--
-- Storage: sorted set, one member per admitted request, never one per unit of cost.
--   score   admission time in us (an integer)
--   member  <length code><ticket>, plus ':'<cost> only when cost > 1
--   ticket  running total of the costs admitted since the set was last empty; a request owns
--           tickets (ticket - cost, ticket]. The cost in the window is then the newest ticket
--           minus the oldest live entry's first ticket: O(log n) per call, never a scan.
--   length code  the number of digits of the ticket: '1'..'8', then '90'..'98', '990'..'998',
--           and so on. Entries of the same microsecond are ordered by member, and plain decimals
--           would sort '10' before '9'; with the code, member order is ticket order and rank
--           order is admission order. Members of cost 1 stay canonical decimal integers, which
--           small sorted sets (listpacks) store as integers, so memory per entry stays small.
--   Examples: ticket 7 -> '17', ticket 41 -> '241', ticket 45 of a cost-4 request -> '245:4',
--   ticket 123456789 -> '90123456789'. Tickets are kept as hi * 10^14 + lo in the script, so
--   they never outgrow the 2^53 of exact doubles, however long the set stays busy.
--   Expiry: one window (ms, rounded up) from each admission, when its last entry has expired.
--
-- Rule: an entry at time s counts while now - s < window (an entry exactly one window old has
-- expired). Admit iff used + cost <= limit; the new entry's score is now. A clock that went back
-- is clamped to the newest entry's time. Check mode prunes expired entries (score <= now - window),
-- also when denying; nothing else is written for a denied request. Peek never prunes, it only
-- counts past them.

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

-- A key of another type is reported, never overwritten. Returns the type found ('none' too).
local function key_type(key, expected, algo)
  local found = redis.call('TYPE', key).ok
  if found ~= 'none' and found ~= expected then
    return nil, redis.error_reply(string.format("WRONGTYPE key '%s' holds a %s, %s needs a %s",
      key, found, algo, expected))
  end
  return found
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

local TICKET_BASE = 100000000000000 -- 10^14

local function ticket_add(hi, lo, n)
  lo = lo + n
  if lo >= TICKET_BASE then return hi + 1, lo - TICKET_BASE end
  if lo < 0 then return hi - 1, lo + TICKET_BASE end
  return hi, lo
end

-- Only ever applied to tickets of one busy period, whose differences stay small.
local function tickets_between(a_hi, a_lo, b_hi, b_lo)
  return (a_hi - b_hi) * TICKET_BASE + (a_lo - b_lo)
end

local function encode_member(hi, lo, cost)
  local digits = hi > 0 and string.format('%d%014d', hi, lo) or fmt(lo)
  local member = string.rep('9', math.floor(#digits / 9)) .. fmt(#digits % 9) .. digits
  if cost > 1 then member = member .. ':' .. fmt(cost) end
  return member
end

-- Returns {hi, lo, cost} or nil for a member this script could not have written.
local function decode_member(member)
  local body, cost = string.match(member, '^(%d+):([1-9]%d*)$')
  if not body then body, cost = string.match(member, '^%d+$'), '1' end
  if not body or #cost > 13 then return nil end
  local nines = #string.match(body, '^9*')
  local code = tonumber(string.sub(body, nines + 1, nines + 1))
  local digits = string.sub(body, nines + 2)
  local n = code and 9 * nines + code
  if not n or n < 1 or n > 28 or #digits ~= n or string.sub(digits, 1, 1) == '0' then
    return nil
  end
  local hi, lo = 0, tonumber(digits)
  if n > 14 then
    hi, lo = tonumber(string.sub(digits, 1, n - 14)), tonumber(string.sub(digits, n - 13))
  end
  cost = tonumber(cost)
  if hi == 0 and lo < cost then return nil end
  return {hi = hi, lo = lo, cost = cost}
end

local function entry_at(key, rank)
  local reply = redis.call('ZRANGE', key, fmt(rank), fmt(rank), 'WITHSCORES')
  local entry = decode_member(reply[1])
  local time = tonumber(reply[2])
  if not entry or not time or time ~= math.floor(time) then
    return nil, redis.error_reply(string.format(
      "ERR ratescope: key '%s' is not a ratescope sliding log (member '%s', score %s)",
      key, string.sub(reply[1], 1, 64), reply[2]))
  end
  entry.time = time
  return entry
end

-- The request fits once the entry owning ticket base + target has expired (tickets are
-- counted from base, the first ticket of the oldest live entry). Every entry owns at least one
-- ticket, so that entry sits at live index <= target - 1: exact when every cost is 1, one read;
-- otherwise a binary search below it, O(log^2 n), on the deny path only.
local function owner_of(key, expired, live, base_hi, base_lo, target)
  local function top(entry) return tickets_between(entry.hi, entry.lo, base_hi, base_lo) end
  local guess = math.min(target - 1, live - 1)
  local entry, err = entry_at(key, expired + guess)
  if err or top(entry) - entry.cost < target then return entry, err end
  local lo, hi = 0, guess - 1
  while lo < hi do
    local mid = math.floor((lo + hi) / 2)
    entry, err = entry_at(key, expired + mid)
    if err then return nil, err end
    if top(entry) >= target then hi = mid else lo = mid + 1 end
  end
  return entry_at(key, expired + lo)
end

local function admit(key, now, window, newest, live, cost)
  local hi, lo = 0, 0 -- an empty set starts a new busy period: tickets restart, members stay short
  if live > 0 then hi, lo = newest.hi, newest.lo end
  hi, lo = ticket_add(hi, lo, cost)
  redis.call('ZADD', key, fmt(now), encode_member(hi, lo, cost))
  redis.call('PEXPIRE', key, fmt(ms_ceil(window)))
end

local function decide(args)
  local key, limit, window, cost, now = args.key, args.limit, args.window, args.cost, args.now
  local _, err = key_type(key, 'zset', 'sliding-log')
  if err then return err end
  local size, newest = redis.call('ZCARD', key), nil
  if size > 0 then
    newest, err = entry_at(key, size - 1)
    if err then return err end
    if newest.time > now then now = newest.time end
  end
  local expired = 0
  if size > 0 then expired = redis.call('ZCOUNT', key, '-inf', fmt(now - window)) end
  local live, used, base_hi, base_lo = size - expired, 0, 0, 0
  if live > 0 then
    local oldest
    oldest, err = entry_at(key, expired)
    if err then return err end
    base_hi, base_lo = ticket_add(oldest.hi, oldest.lo, -oldest.cost)
    used = tickets_between(newest.hi, newest.lo, base_hi, base_lo)
    if used < newest.cost or used > MAX_NOW then -- members parse, yet tickets do not add up
      return redis.error_reply(string.format(
        "ERR ratescope: key '%s' is not a ratescope sliding log (tickets out of order)", key))
    end
  end
  local allowed = used + cost <= limit
  local retry, reset = 0, 0
  if allowed then
    reset = window
  elseif live > 0 then
    local owner
    owner, err = owner_of(key, expired, live, base_hi, base_lo, used + cost - limit)
    if err then return err end
    retry, reset = owner.time + window - now, newest.time + window - now
  end
  if not args.peek then
    if expired > 0 then redis.call('ZREMRANGEBYSCORE', key, '-inf', fmt(now - window)) end
    if allowed then admit(key, now, window, newest, live, cost) end
  end
  if allowed then used = used + cost end
  return {allowed and 1 or 0, limit, used, math.max(0, limit - used), retry, reset}
end

local args, err = parse_args()
if err then return err end
return decide(args)
