-- Spreads requests over the codes c0..c999 that bench/redirects.sh creates.
math.randomseed(os.time())
request = function()
  return wrk.format("GET", "/c" .. math.random(0, 999))
end
