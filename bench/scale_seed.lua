-- Creates links with the aliases m0 .. m(N-1) (N from LINKBOLT_BENCH_N),
-- each of the two wrk threads taking every other one, then stops.
local n = tonumber(os.getenv("LINKBOLT_BENCH_N"))
threads = 0
function setup(thread) thread:set("id", threads); threads = threads + 1 end
function init(args) k = id end
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer " .. os.getenv("LINKBOLT_BENCH_KEY")
request = function()
  local i = k; k = k + 2
  return wrk.format(nil, "/v1/links", nil,
    '{"destination_url":"https://example.com/item/' .. i .. '","alias":"m' .. i .. '"}')
end
response = function() if k >= n then wrk.thread:stop() end end
