-- Naive GCRA (benchmark reference only): HMGET, float arrival time, then HSET + PEXPIRE when
-- allowed.
local key = KEYS[1]
local limit, window, cost = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local now = tonumber(ARGV[4])
if not now then
  local t = redis.call('TIME')
  now = t[1] * 1000000 + t[2]
end
local s = redis.call('HMGET', key, 'tat')
local tat = math.max(tonumber(s[1]) or now, now)
local new_tat = tat + cost * window / limit
if new_tat - now <= window then
  redis.call('HSET', key, 'tat', string.format('%.17g', new_tat))
  redis.call('PEXPIRE', key, math.ceil(window / 1000))
  return {1, math.floor((window - (new_tat - now)) * limit / window)}
end
return {0, math.floor((window - (tat - now)) * limit / window)}
