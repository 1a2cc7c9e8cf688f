-- churn: a session per cycle, initialize -> tools/call -> DELETE, over and over.
--
-- wrk's callbacks don't say which connection they are for, so the cycles in flight form one
-- pool: an initialize answer queues a tools/call on that session (its JSON-RPC id remembers
-- the session), the tools/call answer queues the DELETE, a DELETE answer (2xx, no JSON-RPC
-- body) completes a cycle. A request goes to the most advanced pending step first, so each
-- connection keeps one cycle moving. Servers run stateful.
-- cycles: completed DELETEs; ok / bad: tools/call answers; non200: any non-2xx answer;
-- inits: initialize answers; lost: an answer that could not be matched to a session.

local here = string.match(debug.getinfo(1, "S").source, "^@(.*/)") or "./"
local C = dofile(here .. "common.lua")

cycles, ok, bad, non200, inits, lost = 0, 0, 0, 0, 0, 0
local to_delete = {}     -- sessions whose tools/call answered
local to_call = {}       -- tools/call request strings for sessions whose initialize answered
local by_id = {}         -- tools/call id -> session
local next_id = 0
local RING = 4096        -- ids cycle; far more than the cycles ever in flight

function setup(thread) C.setup(thread) end

function request()
  local n = #to_delete
  if n > 0 then
    local session = to_delete[n]
    to_delete[n] = nil
    return C.delete(session)
  end
  n = #to_call
  if n > 0 then
    local req = to_call[n]
    to_call[n] = nil
    return req
  end
  next_id = next_id % RING + 1
  return C.post(string.format(C.INIT, next_id))
end

function response(status, headers, body)
  if status < 200 or status > 299 then
    non200 = non200 + 1
    C.count_status(status)
    return
  end
  if string.find(body, '"jsonrpc"', 1, true) == nil then  -- the DELETE's answer
    cycles = cycles + 1
    return
  end
  if C.is_init_result(body) then
    local session = C.header(headers, "mcp-session-id")
    if session == nil then
      lost = lost + 1
      return
    end
    inits = inits + 1
    next_id = next_id % RING + 1
    by_id[next_id] = session
    to_call[#to_call + 1] = C.post(string.format(C.CALL, next_id), session)
    return
  end
  if C.is_call_result(body) then ok = ok + 1 else bad = bad + 1 end
  local id = tonumber(string.match(body, '"id":%s*(%d+)'))
  local session = id and by_id[id]
  if session then
    by_id[id] = nil
  else
    session = C.header(headers, "mcp-session-id")  -- the bare app answers a fixed id
  end
  if session then
    to_delete[#to_delete + 1] = session
  else
    lost = lost + 1
  end
end

function done(summary, latency, requests)
  C.report(summary, latency, { "cycles", "ok", "bad", "non200", "inits", "lost" })
end
