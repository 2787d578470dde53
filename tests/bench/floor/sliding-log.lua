-- Sliding-log floor (benchmark reference only): the Redis calls ratescope's sliding log makes on
-- its common paths and nothing else. TIME, the newest entry, the oldest entry (with a prune and
-- a second read when it has expired), then ZADD + PEXPIRE when allowed. Members are the bare
-- running ticket (cost 1 only); no member decoding or validation, no exact retry-after search,
-- no clock clamping: what a script keeping the same reads and writes cannot go below.
local key = KEYS[1]
local limit, window = tonumber(ARGV[1]), tonumber(ARGV[2])
local now = tonumber(ARGV[4])
if not now then
  local t = redis.call('TIME')
  now = t[1] * 1000000 + t[2]
end
local cut = now - window
local newest = redis.call('ZRANGE', key, '-1', '-1', 'WITHSCORES')
local ticket, used = 0, 0
if newest[1] and tonumber(newest[2]) > cut then
  ticket = tonumber(newest[1])
  local oldest = redis.call('ZRANGE', key, '0', '0', 'WITHSCORES')
  if tonumber(oldest[2]) <= cut then
    redis.call('ZREMRANGEBYSCORE', key, '-inf', string.format('%d', cut))
    oldest = redis.call('ZRANGE', key, '0', '0', 'WITHSCORES')
  end
  used = ticket - tonumber(oldest[1]) + 1
end
if used + 1 > limit then
  return {0, limit, used, 0, 1, 1}
end
redis.call('ZADD', key, string.format('%d', now), string.format('%d', ticket + 1))
redis.call('PEXPIRE', key, string.format('%d', math.ceil(window / 1000)))
return {1, limit, used + 1, limit - used - 1, 0, window}
