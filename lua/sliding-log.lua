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

local TICKET_BASE = 100000000000000 -- 10^14

local function encode_member(hi, lo, cost)
  if hi == 0 and lo < 100000000 and cost == 1 then -- the common case: '1'..'8' and the digits
    local digits = string.format('%d', lo)
    return #digits .. digits
  end
  local digits = hi > 0 and string.format('%d%014d', hi, lo) or string.format('%d', lo)
  local member = string.rep('9', math.floor(#digits / 9)) .. string.format('%d', #digits % 9)
    .. digits
  if cost > 1 then member = member .. ':' .. string.format('%d', cost) end
  return member
end

-- Returns hi, lo, cost, or nil for a member this script could not have written.
local function decode_member(member)
  -- The common case first: cost 1 and a ticket of 1..8 digits ('17' is ticket 7, '241' is 41).
  local code = string.byte(member, 1)
  if code and code >= 49 and code <= 56 and #member == code - 47 and string.byte(member, 2) ~= 48
      and not string.find(member, '%D') then
    code = code - 48
    return 0, tonumber(member) - code * 10 ^ code, 1
  end
  local body, cost = string.match(member, '^(%d+):([1-9]%d*)$')
  if not body then body, cost = string.match(member, '^%d+$'), '1' end
  if not body or #cost > 13 then return nil end
  local nines = #string.match(body, '^9*')
  code = tonumber(string.sub(body, nines + 1, nines + 1))
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
  return hi, lo, cost
end

-- The entry of a ZRANGE ... WITHSCORES reply of one member: its time, hi, lo and cost; or nil
-- and an error for one this script could not have written.
local function entry_of(key, reply)
  local hi, lo, cost = decode_member(reply[1])
  local time = tonumber(reply[2])
  if not hi or not time or time ~= math.floor(time) then
    return nil, redis.error_reply(string.format(
      "ERR ratescope: key '%s' is not a ratescope sliding log (member '%s', score %s)",
      key, string.sub(reply[1], 1, 64), reply[2]))
  end
  return time, hi, lo, cost
end

-- The request fits once the entry owning ticket base + target has expired (tickets are
-- counted from base, the first ticket of the oldest live entry, which sits at rank expired).
-- Every entry owns at least one ticket, so that entry sits at live index <= target - 1: exact
-- when every cost is 1, one read (past the end, the newest entry is the bound); otherwise a
-- binary search below it, O(log^2 n), on the deny path only. Returns the entry's time.
local function owner_of(key, expired, base_hi, base_lo, target)
  -- The entry at a live index as {time, top}, top its last ticket counted from base; an empty
  -- reply (nil) when the index is past the end.
  local function entry_at(index)
    local rank = string.format('%d', expired + index)
    local reply = redis.call('ZRANGE', key, rank, rank, 'WITHSCORES')
    if not reply[1] then return nil end
    local time, hi, lo, cost = entry_of(key, reply)
    if not time then return nil, hi end
    return {time = time, cost = cost, top = (hi - base_hi) * TICKET_BASE + (lo - base_lo)}
  end
  local guess = target - 1
  local entry, err = entry_at(guess)
  if not entry and not err then
    guess = redis.call('ZCARD', key) - expired - 1
    entry, err = entry_at(guess)
  end
  if err then return nil, err end
  if entry.top - entry.cost < target then return entry.time end
  local lo, hi = 0, guess - 1
  while lo < hi do
    local mid = math.floor((lo + hi) / 2)
    entry, err = entry_at(mid)
    if err then return nil, err end
    if entry.top >= target then hi = mid else lo = mid + 1 end
  end
  entry, err = entry_at(lo)
  if err then return nil, err end
  return entry.time
end

-- Reads: the newest entry (WRONGTYPE comes from this one), then the first; only when the first
-- has expired, the oldest live one. Nothing is written before every entry used is validated.
-- Tickets are hi * 10^14 + lo; differences are only taken within one busy period, so they stay
-- small.
local function decide(KEYS, ARGV)
  local limit, window, cost, now = parse_args(KEYS, ARGV)
  if not limit then return window end
  local key = KEYS[1]
  -- The first command on the key runs under redis.pcall instead of a TYPE call on every request.
  local reply = redis.pcall('ZRANGE', key, '-1', '-1', 'WITHSCORES')
  if reply.err then -- another type is reported (asking TYPE only then), never overwritten
    if string.sub(reply.err, 1, 10) ~= 'WRONGTYPE ' then error(reply) end
    return redis.error_reply(string.format(
      "WRONGTYPE key '%s' holds a %s, sliding-log needs a zset",
      key, redis.call('TYPE', key).ok))
  end
  local newest, newest_hi, newest_lo, newest_cost -- newest: the newest entry's time
  if reply[1] then
    newest, newest_hi, newest_lo, newest_cost = entry_of(key, reply)
    if not newest then return newest_hi end
    if newest > now then now = newest end
  end
  local cut = now - window -- an entry at or before cut has expired
  local live = newest ~= nil and newest > cut
  -- expired: the number of expired entries, 0 when there is none, nil when some (not counted)
  local expired, oldest, oldest_cost = 0, nil, nil -- oldest: the oldest live entry's time
  local used, base_hi, base_lo = 0, 0, 0
  if live then
    reply = redis.call('ZRANGE', key, '0', '0', 'WITHSCORES')
    local first_time = tonumber(reply[2])
    if not (first_time and first_time > cut) then
      expired = nil
      reply = redis.call('ZRANGEBYSCORE', key, '(' .. string.format('%d', cut), '+inf',
        'WITHSCORES', 'LIMIT', '0', '1')
    end
    oldest, base_hi, base_lo, oldest_cost = entry_of(key, reply)
    if not oldest then return base_hi end
    base_lo = base_lo - oldest_cost -- base: the ticket before the oldest live entry's first
    if base_lo < 0 then base_hi, base_lo = base_hi - 1, base_lo + TICKET_BASE end
    used = (newest_hi - base_hi) * TICKET_BASE + (newest_lo - base_lo)
    if used < newest_cost or used > MAX_NOW then -- members parse, yet tickets do not add up
      return redis.error_reply(string.format(
        "ERR ratescope: key '%s' is not a ratescope sliding log (tickets out of order)", key))
    end
  elseif newest then
    expired = nil -- every entry has expired
  end
  local allowed = used + cost <= limit
  local retry, reset = 0, 0
  if allowed then
    reset = window
  elseif live then
    local target, owner = used + cost - limit, oldest
    if target > oldest_cost then -- the oldest live entry alone does not make room
      if not expired then expired = redis.call('ZCOUNT', key, '-inf', string.format('%d', cut)) end
      local err
      owner, err = owner_of(key, expired, base_hi, base_lo, target)
      if err then return err end
    end
    retry, reset = owner + window - now, newest + window - now
  end
  if ARGV[5] ~= 'peek' then
    if expired ~= 0 then redis.call('ZREMRANGEBYSCORE', key, '-inf', string.format('%d', cut)) end
    if allowed then
      -- an empty set starts a new busy period: tickets restart, members stay short
      local hi, lo = 0, cost
      if live then hi, lo = newest_hi, newest_lo + cost end
      if lo >= TICKET_BASE then hi, lo = hi + 1, lo - TICKET_BASE end
      redis.call('ZADD', key, string.format('%d', now), encode_member(hi, lo, cost))
      -- expiry in whole ms, rounded up, so the key never vanishes while an entry still counts
      redis.call('PEXPIRE', key, string.format('%d', math.ceil(window / 1000)))
    end
  end
  if allowed then used = used + cost end
  return {allowed and 1 or 0, limit, used, math.max(0, limit - used), retry, reset}
end

-- EVAL runs this file for every request: decide now. The functions library runs it once, with
-- no KEYS, and registers the decide it returns (tools/function-library.cmake).
if KEYS then return decide(KEYS, ARGV) end
return decide
