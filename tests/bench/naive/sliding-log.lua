-- Naive sliding log (benchmark reference only): TIME, ZREMRANGEBYSCORE, ZCARD, then ZADD +
-- EXPIRE when allowed; member = timestamp.
local key = KEYS[1]
local limit, window = tonumber(ARGV[1]), tonumber(ARGV[2])
local now = tonumber(ARGV[4])
if not now then
  local t = redis.call('TIME')
  now = t[1] * 1000000 + t[2]
end
redis.call('ZREMRANGEBYSCORE', key, '-inf', string.format('%d', now - window))
local count = redis.call('ZCARD', key)
if count < limit then
  local member = string.format('%d', now)
  redis.call('ZADD', key, member, member)
  redis.call('EXPIRE', key, math.ceil(window / 1000000))
  return {1, count + 1}
end
return {0, count}
