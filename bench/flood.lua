-- Floods the short link /f with huge headers, as a hostile client would:
-- 60 KB User-Agent and Referer headers in four shapes, each built once
-- with random content so the user-agent cache and the referrers vary.
--   1. a 60 KB User-Agent;
--   2. a 60 KB Referer whose host is made up (becomes "(invalid)");
--   3. 30 KB of each, the Referer a real host with a long path;
--   4. 60 KB of each (over the server's 64 KiB header limit: answered 431,
--      which wrk counts as non-2xx and as read errors).
local function junk(n)
  local t = {}
  for i = 1, n do t[i] = string.char(math.random(97, 122)) end
  return table.concat(t)
end

local reqs = {}
init = function(args)
  math.randomseed(os.time() + (tonumber(tostring({}):sub(8)) or 0))
  for i = 1, 8 do
    local ua60, ua30 = "Mozilla/5.0 " .. junk(60 * 1024), "Mozilla/5.0 " .. junk(30 * 1024)
    reqs[#reqs + 1] = wrk.format("GET", "/f", { ["User-Agent"] = ua60 })
    reqs[#reqs + 1] = wrk.format("GET", "/f", { ["Referer"] = "https://" .. junk(60 * 1024) .. ".example/" })
    reqs[#reqs + 1] = wrk.format("GET", "/f", { ["User-Agent"] = ua30, ["Referer"] = "https://news.example.org/" .. junk(30 * 1024) })
    reqs[#reqs + 1] = wrk.format("GET", "/f", { ["User-Agent"] = ua60, ["Referer"] = "https://" .. junk(60 * 1024) .. "/" })
  end
end

local n = 0
request = function()
  n = n + 1
  return reqs[(n % #reqs) + 1]
end
