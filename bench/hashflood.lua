-- Requests that cost a password hash without a session, as a stranger
-- sends them from many addresses (X-Forwarded-For; the server runs with
-- server.behind_proxy), or from one with HASHFLOOD_ONE_ADDRESS=1: made-up
-- password link tokens and logins of unknown e-mails, in turn. Prints the
-- statuses they got.
math.randomseed(os.time())
local one = os.getenv("HASHFLOOD_ONE_ADDRESS") == "1"
local n = 0
request = function()
  n = n + 1
  local addr = string.format("198.18.%d.%d", math.random(0, 255), math.random(1, 254))
  if one then addr = "198.18.0.1" end
  local headers = {["Content-Type"] = "application/json", ["X-Forwarded-For"] = addr}
  if n % 2 == 0 then
    return wrk.format("POST", "/v1/auth/password-reset", headers,
      '{"token":"made-up-' .. n .. '","password":"a brand new password ' .. n .. '"}')
  end
  return wrk.format("POST", "/v1/auth/login", headers,
    '{"email":"nobody' .. n .. '@example.com","password":"a guess at it ' .. n .. '"}')
end
local threads = {}
setup = function(thread) table.insert(threads, thread) end
init = function() counts = {} end
response = function(status) counts[status] = (counts[status] or 0) + 1 end
done = function()
  local all = {}
  for _, t in ipairs(threads) do
    for s, c in pairs(t:get("counts")) do all[s] = (all[s] or 0) + c end
  end
  for s, c in pairs(all) do io.write(string.format("status %d: %d  ", s, c)) end
  print()
end
