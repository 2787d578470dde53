-- Naive fixed window (benchmark reference only): INCR, and PEXPIRE when the key is new.
local key = KEYS[1]
local limit, window = tonumber(ARGV[1]), tonumber(ARGV[2])
local n = redis.call('INCR', key)
if n == 1 then
  redis.call('PEXPIRE', key, math.ceil(window / 1000))
end
return {n <= limit and 1 or 0, n}
