-- Wrong passwords for one account as fast as the server answers.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"email":"bench@example.com","password":"wrong password"}'
local threads = {}
setup = function(thread) table.insert(threads, thread) end
init = function() counts = {} end
response = function(status) counts[status] = (counts[status] or 0) + 1 end
done = function()
  local all = {}
  for _, t in ipairs(threads) do
    for s, n in pairs(t:get("counts")) do all[s] = (all[s] or 0) + n end
  end
  for s, n in pairs(all) do print(string.format("status %d: %d", s, n)) end
end
