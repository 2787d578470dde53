-- ratescope sliding-buckets limiter (clock-aligned sub-buckets summed over the trailing window,
-- the oldest bucket weighted by its overlap). Redis >= 5 (embedded Lua 5.1); no shebang, so it
-- also runs with EVAL/EVALSHA on Redis 6.
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
-- ARGV[6]  B, the number of buckets per window: integer 2..3600; absent or '' means 60
--
-- Reply: {allowed (1|0), limit, used, remaining, retry_after_us, reset_after_us}
--   used              the estimate below after this decision; remaining = max(0, limit - used)
--   retry_after_us    0 when allowed, else the exact wait until this cost would be admitted if
--                     nothing else happened
--   reset_after_us    wait until used is 0 (0 if it already is)
-- Errors leave the key untouched: 'ERR ratescope: ...' for a bad argument or a hash this script
-- did not write, 'WRONGTYPE ...' when the key is not a hash.
--
-- Rule: bucket j covers the times t with floor(t * B / window) == j (width window / B, which
-- need not be a whole number of microseconds: time is counted here in units of 1/B us, where a
-- bucket is `window` units wide). At now, id = floor(now * B / window) and the elapsed part of
-- the current bucket is e = (now * B) mod window units. The trailing window (now - window, now]
-- covers buckets id - B + 1 .. id whole and the last window - e units of bucket id - B, so
--   used = sum(c[id - B + 1 .. id]) + floor(c[id - B] * (window - e) / window)
-- Admit iff used + cost <= limit; an admission adds cost to c[id]. With B = 1 this would be the
-- sliding counter; a larger B lets less through around a window boundary: at most
-- limit * (1 + 1/B) in any window-long span, where the sliding counter allows up to 2x.
-- Worked example: window 60 s, B = 6 (10 s buckets), counts 3, 0, 0, 0, 0, 2, 4 for buckets
-- id - 6 .. id, 4 s into the current bucket, limit 8: floor(3 * 6 / 10) + 6 = 7, so a request
-- of cost 1 is admitted (8), the next one denied.
-- A clock that went back into an older bucket is treated as the first microsecond of the newest
-- stored one. Denied requests write nothing.
--
-- Storage: hash {ws = window in us, bn = B, t = sum of the stored buckets, l = lowest bucket id
-- that may be stored, h = newest bucket id with admissions, b<id> = that bucket's count, one
-- field per bucket with admissions}. At most B + 1 buckets are kept (older ones are deleted by
-- the next admission), so memory is O(B) whatever the limit. A decision reads ws, bn, t, l, h
-- and the two buckets it needs in one HMGET; only a denial reads the whole window (for the exact
-- retry). A hash kept with another window or B (the limits were changed) is read as empty and
-- replaced by the next admission, as the other scripts start a new window when theirs changes.
-- Expiry: window + window / B (ms, rounded up) from each admission, when even bucket id has left.

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

local MAX_BUCKETS = 3600

-- B from ARGV[6] (digits only, 2..3600 and at most the window in us, so that a bucket is at
-- least 1 us wide; '' or absent for 60), or nil and the error reply.
local function parse_buckets(raw, window)
  if raw == nil or raw == '' then raw = '60' end
  local n = tonumber(raw)
  if n and n >= 2 and n <= MAX_BUCKETS and n <= window and not string.find(raw, '%D') then
    return n
  end
  return nil, redis.error_reply(string.format(
    "ERR ratescope: buckets must be an integer in 2..%d (and at most the window in us), got '%s'",
    MAX_BUCKETS, string.sub(raw, 1, 64)))
end

-- Microseconds from now until m bucket periods on plus d units into that period (period 0 is
-- the rest of the current bucket, x0 units), rounded up: the first microsecond it holds.
-- Units are 1/b us and a period `window` units, so (m - 1) * window can pass 2^53: muldiv.
local function bucket_us(m, d, x0, window, b)
  local q, r = 0, d
  if m > 0 then
    q, r = muldiv(m - 1, window, b)
    r = r + x0 + d
  end
  local q2, r2 = divmod(r, b)
  if r2 > 0 then q2 = q2 + 1 end
  return q + q2
end

-- The wait until used is 0: until the newest bucket (count c, the weighted one m periods on)
-- weighs nothing.
local function buckets_reset(c, m, window, b, x0)
  if c == 0 or m < 0 then return 0 end
  local ystart = window
  if m == 0 then ystart = x0 end
  local ymax = ceil_muldiv(1, window, c) - 1
  if ymax >= ystart then return bucket_us(m, 0, x0, window, b) end
  return bucket_us(m, ystart - ymax, x0, window, b)
end

-- The bucket of a time and the units elapsed in it.
local function bucket_of(t, window, b)
  if math.fmod(window, b) == 0 then -- whole microseconds per bucket: no product to split
    local w = window / b
    local e = math.fmod(t, w)
    return (t - e) / w, e * b
  end
  return muldiv(t, b, window)
end

local function decide(KEYS, ARGV)
  local limit, window, cost, now = parse_args(KEYS, ARGV)
  if not limit then return window end
  local b, bad = parse_buckets(ARGV[6], window)
  if not b then return bad end
  local key = KEYS[1]
  local id, elapsed = bucket_of(now, window, b)
  -- The first command on the key runs under redis.pcall instead of a TYPE call on every request.
  local raw = redis.pcall('HMGET', key, 'ws', 'bn', 't', 'l', 'h',
    string.format('b%d', id - b), string.format('b%d', id))
  if raw.err then -- another type is reported (asking TYPE only then), never overwritten
    if string.sub(raw.err, 1, 10) ~= 'WRONGTYPE ' then error(raw) end
    return redis.error_reply(string.format(
      "WRONGTYPE key '%s' holds a %s, sliding-buckets needs a hash",
      key, redis.call('TYPE', key).ok))
  end
  local names = {'ws', 'bn', 't', 'l', 'h', string.format('b%d', id - b), string.format('b%d', id)}
  local highs = {MAX_WINDOW, MAX_BUCKETS, MAX_NOW, MAX_NOW, MAX_NOW, MAX_LIMIT, MAX_LIMIT}
  local v = {}
  for i = 1, 7 do
    v[i] = field_in(raw[i] or (i > 5 and '0' or ''), highs[i])
  end
  local ws, bn, t, l, h, oldest, curr = v[1], v[2], v[3], v[4], v[5], v[6], v[7]
  -- A missing key misses every field, the first one included: only then ask whether it exists.
  -- A hash this script did not write is reported, never overwritten.
  if not (ws and bn and t and l and h and l <= h and h - l <= MAX_BUCKETS and oldest and curr)
      and (raw[1] or redis.call('EXISTS', key) == 1) then
    local shown = 'fields l and h are ' .. tostring(raw[4]) .. ' and ' .. tostring(raw[5])
    for i = 1, 7 do
      if not v[i] then
        shown = 'field ' .. names[i] .. ' is '
          .. (raw[i] and "'" .. string.sub(raw[i], 1, 64) .. "'" or 'missing')
        break
      end
    end
    return redis.error_reply(string.format(
      "ERR ratescope: key '%s' is not a ratescope sliding-buckets hash (%s)", key, shown))
  end
  -- Kept for other limits (window or B changed): read as empty, replaced by the next admission.
  local stored = ws and ws == window and bn == b
  local total, gone = 0, nil
  if stored then
    if id < h then -- the clock went back: read at the first microsecond of the newest bucket
      local q, r = muldiv(h, window, b)
      if r > 0 then q = q + 1 end
      id, elapsed = bucket_of(q, window, b)
      local again = redis.call('HMGET', key, string.format('b%d', id - b), string.format('b%d', id))
      oldest = field_in(again[1] or '0', MAX_LIMIT) or 0
      curr = field_in(again[2] or '0', MAX_LIMIT) or 0
    end
    total = t
    if id - b > h then -- everything stored has left the window
      total, oldest, curr, gone = 0, 0, 0, 'all'
    elseif l < id - b then -- buckets l .. id - b - 1 have left it: take them off the total
      gone = {}
      for j = l, id - b - 1 do gone[#gone + 1] = string.format('b%d', j) end
      local counts = redis.call('HMGET', key, unpack(gone))
      for i = 1, #counts do total = total - (tonumber(counts[i]) or 0) end
    end
  else
    oldest, curr, gone = 0, 0, ws and 'all'
  end
  local x0 = window - elapsed
  local used = total - oldest + muldiv(oldest, x0, window)
  local allowed = used + cost <= limit
  local retry, newest, ahead = 0, 0, -1
  if allowed then
    used, curr, newest, ahead = used + cost, curr + cost, curr + cost, b
    if ARGV[5] ~= 'peek' then
      local bucket, sum = string.format('b%d', id), string.format('%d', total + cost)
      if stored and gone ~= 'all' then -- ws and bn are there; l and h change only with the bucket
        if gone then redis.call('HDEL', key, unpack(gone)) end
        local low = math.max(l, id - b)
        if low == l and id == h then
          redis.call('HSET', key, bucket, string.format('%d', curr), 't', sum)
        else
          redis.call('HSET', key, bucket, string.format('%d', curr), 't', sum,
            'l', string.format('%d', low), 'h', string.format('%d', id))
        end
      else
        if gone == 'all' then redis.call('DEL', key) end
        redis.call('HSET', key, bucket, string.format('%d', curr), 't', sum,
          'l', string.format('%d', id), 'h', string.format('%d', id),
          'ws', string.format('%d', window), 'bn', string.format('%d', b))
      end
      local ttl = math.ceil((window + math.ceil(window / b)) / 1000)
      redis.call('PEXPIRE', key, string.format('%d', ttl))
    end
  else
    -- Denied: the exact wait until cost fits. m periods on, bucket id + m - b is the weighted
    -- one and the later ones count whole (s); floor(c * y / window) <= k with y units of its
    -- overlap left iff y <= ceil((k + 1) * window / c) - 1. Buckets are read from the oldest
    -- only as far as needed, a few more each time; those below l are empty, and when the
    -- current bucket holds all of s, so are those between.
    local c, have, chunk, s, m = {[0] = oldest, [b] = curr}, 0, 4, total - oldest, 0
    if s == curr then have = b end
    have = math.max(have, math.min(b, l - (id - b) - 1))
    for j = 1, have do c[j] = c[j] or 0 end
    while true do
      local ystart, k = window, limit - cost - s
      if m == 0 then ystart = x0 end
      if k >= 0 then
        local ymax = ystart
        if c[m] > 0 then ymax = ceil_muldiv(k + 1, window, c[m]) - 1 end
        if ymax >= ystart then retry = bucket_us(m, 0, x0, window, b) break end
        if ymax >= 1 then retry = bucket_us(m, ystart - ymax, x0, window, b) break end
      end
      if m == b then retry = bucket_us(b + 1, 0, x0, window, b) break end
      if have <= m and m + 1 < b then -- c[b] is curr; nothing is stored past h
        local last, fields, got = math.min(b - 1, m + chunk), {}, {}
        for j = m + 1, math.min(last, h - id + b) do
          fields[#fields + 1] = string.format('b%d', id - b + j)
        end
        if #fields > 0 then got = redis.call('HMGET', key, unpack(fields)) end
        for j = m + 1, last do c[j] = tonumber(got[j - m]) or 0 end
        have, chunk = last, chunk * 2
      end
      s, m = s - c[m + 1], m + 1
    end
    ahead = h - id + b
    newest = c[ahead] or tonumber(redis.call('HGET', key, string.format('b%d', h))) or 0
  end
  return {allowed and 1 or 0, limit, used, math.max(0, limit - used), retry,
          buckets_reset(newest, ahead, window, b, x0)}
end

-- EVAL runs this file for every request: decide now. The functions library runs it once, with
-- no KEYS, and registers the decide it returns (tools/function-library.cmake).
if KEYS then return decide(KEYS, ARGV) end
return decide
