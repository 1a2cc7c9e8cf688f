-- call-session, pipelined: the sessions are opened before the load (the runner's initialize and
-- notifications/initialized; their ids are the script arguments after the connection count and
-- the depth), and each write carries `depth` POST tools/call of one session (HTTP/1.1
-- pipelining), the sessions taken in turn: wrk then spends a fraction of its CPU per call, which
-- on a small machine leaves the server's workers the cores. Ids are unique among the calls in
-- flight.

local here = string.match(debug.getinfo(1, "S").source, "^@(.*/)") or "./"
local C = dofile(here .. "common.lua")
-- The answers are counted as call_stateless.lua counts them: its counters, setup, response
-- and done (with its own copy of common.lua, whose thread list done reads); init and
-- request are this script's own (defined below, they replace its).
dofile(here .. "call_stateless.lua")

local sessions = {}
local depth = 1
local turn = 0
local next_id = 0
local RING = 4096        -- ids cycle; far more than the calls ever in flight

function init(args)
  depth = tonumber(args[2]) or 1
  for i = 3, #args do sessions[#sessions + 1] = args[i] end
end

function request()
  local session = nil
  if #sessions > 0 then
    turn = turn % #sessions + 1
    session = sessions[turn]
  end
  local calls = {}
  for i = 1, depth do
    next_id = next_id % RING + 1
    calls[i] = C.post(string.format(C.CALL, next_id), session)
  end
  return table.concat(calls)
end
