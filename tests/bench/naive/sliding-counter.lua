-- Naive sliding counter (benchmark reference only): HMGET, then HSET + PEXPIRE when allowed.
local key = KEYS[1]
local limit, window, cost = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local now = tonumber(ARGV[4])
if not now then
  local t = redis.call('TIME')
  now = t[1] * 1000000 + t[2]
end
local id = math.floor(now / window)
local s = redis.call('HMGET', key, 'w', 'c', 'p')
local w, curr, prev = tonumber(s[1]), 0, 0
if w == id then
  curr, prev = tonumber(s[2]), tonumber(s[3])
elseif w == id - 1 then
  prev = tonumber(s[2])
end
local weighted = math.floor(prev * (window - (now - id * window)) / window)
if weighted + curr + cost <= limit then
  redis.call('HSET', key, 'w', string.format('%d', id), 'c', curr + cost, 'p', prev)
  redis.call('PEXPIRE', key, math.ceil(2 * window / 1000))
  return {1, weighted + curr + cost}
end
return {0, weighted + curr}
