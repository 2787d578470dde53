-- Fixed-window floor (benchmark reference only): the Redis calls ratescope's fixed window makes
-- on its common paths and nothing else. TIME (the server clock), HMGET of the window id and the
-- count (denied requests store nothing, so the state is read before deciding), then HINCRBY
-- within the window or HSET + PEXPIRE for a new one. No validation, float arithmetic, no
-- WRONGTYPE or foreign-hash checks: what a script keeping the same rule cannot go below.
local key = KEYS[1]
local limit, window, cost = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local now = tonumber(ARGV[4])
if not now then
  local t = redis.call('TIME')
  now = t[1] * 1000000 + t[2]
end
local raw = redis.call('HMGET', key, 'w', 'n')
local id = math.floor(now / window)
local count = 0
if tonumber(raw[1]) == id then count = tonumber(raw[2]) end
if count + cost > limit then
  return {0, limit, count, limit - count, window - now % window, window - now % window}
end
if count > 0 then
  redis.call('HINCRBY', key, 'n', cost)
else
  redis.call('HSET', key, 'w', string.format('%d', id), 'n', cost)
  redis.call('PEXPIRE', key, string.format('%d', math.ceil((2 * window - now % window) / 1000)))
end
count = count + cost
return {1, limit, count, limit - count, 0, window - now % window}
