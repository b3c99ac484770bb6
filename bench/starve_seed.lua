-- Creates the links s0..s19999 for bench/starve.sh (two wrk threads share
-- them), then only reads health.
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer " .. os.getenv("LINKBOLT_BENCH_TOKEN")
local n = tonumber(os.getenv("LINKBOLT_BENCH_LINKS") or "20000")
thread_id, threads = 0, 1
setup = function(thread)
  thread:set("thread_id", threads - 1)
  threads = threads + 1
end
local i = -1
request = function()
  i = i + 1
  local k = i * 2 + thread_id -- two threads share the codes
  if k < n then
    return wrk.format("POST", "/v1/links", nil,
      '{"destination_url":"https://example.com/page/' .. k .. '","alias":"s' .. k .. '","tags":["t' .. (k % 20) .. '"]}')
  end
  return wrk.format("GET", "/healthz")
end
