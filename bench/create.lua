-- POSTs a new link per request; the server generates each code.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer " .. os.getenv("LINKBOLT_BENCH_KEY")
counter = 0
request = function()
  counter = counter + 1
  return wrk.format(nil, "/v1/links", nil,
    '{"destination_url":"https://example.com/item/' .. counter .. '","tags":["bench","t' .. (counter % 50) .. '"]}')
end
