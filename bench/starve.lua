-- Redirects spread over the codes s0..s19999 that bench/starve.sh creates.
math.randomseed(os.time())
request = function()
  return wrk.format("GET", "/s" .. math.random(0, 19999))
end
