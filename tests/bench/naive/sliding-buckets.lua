-- Naive bucketed sliding counter (benchmark reference only), the pattern the seed articles
-- describe: one hash field per sub-bucket (window / 60 wide), HGETALL summed over the trailing
-- window with the oldest bucket weighted, HINCRBY + PEXPIRE when allowed; stale buckets are
-- deleted as they are met.
local key = KEYS[1]
local limit, window, cost = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local buckets = tonumber(ARGV[6]) or 60
local now = tonumber(ARGV[4])
if not now then
  local t = redis.call('TIME')
  now = t[1] * 1000000 + t[2]
end
local width = window / buckets
local id = math.floor(now / width)
local all = redis.call('HGETALL', key)
local used, stale = 0, {}
for i = 1, #all, 2 do
  local b, n = tonumber(all[i]), tonumber(all[i + 1])
  if b > id - buckets then
    used = used + n
  elseif b == id - buckets then
    used = used + math.floor(n * (width - (now - id * width)) / width)
  else
    stale[#stale + 1] = all[i]
  end
end
if used + cost <= limit then
  if #stale > 0 then redis.call('HDEL', key, unpack(stale)) end
  redis.call('HINCRBY', key, string.format('%d', id), cost)
  redis.call('PEXPIRE', key, math.ceil((window + width) / 1000))
  return {1, used + cost}
end
return {0, used}
