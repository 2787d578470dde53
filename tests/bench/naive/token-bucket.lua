-- Naive token bucket (benchmark reference only): HMGET, float refill, then HSET + PEXPIRE when
-- allowed.
local key = KEYS[1]
local limit, window, cost = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local now = tonumber(ARGV[4])
if not now then
  local t = redis.call('TIME')
  now = t[1] * 1000000 + t[2]
end
local s = redis.call('HMGET', key, 'tokens', 'ts')
local tokens, ts = tonumber(s[1]) or limit, tonumber(s[2]) or now
if now > ts then
  tokens = math.min(limit, tokens + (now - ts) * limit / window)
end
if tokens >= cost then
  tokens = tokens - cost
  redis.call('HSET', key, 'tokens', string.format('%.17g', tokens), 'ts', string.format('%d', now))
  redis.call('PEXPIRE', key, math.ceil(window / 1000))
  return {1, math.floor(tokens)}
end
return {0, math.floor(tokens)}
