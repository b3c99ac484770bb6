-- Spreads GET /v1/links over the keys listed one a line in $LINKBOLT_BENCH_KEYS
-- and counts the answers by status.
local keys = {}
for line in io.lines(os.getenv("LINKBOLT_BENCH_KEYS")) do keys[#keys + 1] = line end
local i = 0
request = function()
  i = i + 1
  return wrk.format("GET", "/v1/links", { ["Authorization"] = "Bearer " .. keys[i % #keys + 1] })
end
local threads = {}
setup = function(thread) table.insert(threads, thread) end
init = function() ok, limited, other = 0, 0, 0 end
response = function(status)
  if status == 200 then ok = ok + 1 elseif status == 429 then limited = limited + 1 else other = other + 1 end
end
done = function()
  local o, l, x = 0, 0, 0
  for _, t in ipairs(threads) do o = o + t:get("ok"); l = l + t:get("limited"); x = x + t:get("other") end
  print(string.format("answered 200: %d, 429: %d, other: %d", o, l, x))
end
