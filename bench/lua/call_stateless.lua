-- call-stateless: every request is the same POST tools/call, no session (servers run stateless).
-- A response counts as ok when it is a 200 carrying add(1, 2)'s result; a 200 without it
-- is `bad`, any other status `non200`.

local here = string.match(debug.getinfo(1, "S").source, "^@(.*/)") or "./"
local C = dofile(here .. "common.lua")

ok, bad, non200 = 0, 0, 0
local req

function setup(thread) C.setup(thread) end

function init(args)
  req = C.post(string.format(C.CALL, 1))
end

function request()
  return req
end

function response(status, headers, body)
  C.count_call(status, body, C.is_call_result)
end

function done(summary, latency, requests)
  C.report(summary, latency, { "ok", "bad", "non200" })
end
