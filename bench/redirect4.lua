-- Redirects spread over the codes s0..s3 that bench/hashflood.sh creates.
math.randomseed(os.time())
request = function()
  return wrk.format("GET", "/s" .. math.random(0, 3))
end
