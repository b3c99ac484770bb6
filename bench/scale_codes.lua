-- Spreads GETs uniformly over the aliases m0 .. m(N-1) of bench/scale.sh.
local n = tonumber(os.getenv("LINKBOLT_BENCH_N"))
request = function() return wrk.format("GET", "/m" .. math.random(0, n - 1)) end
