-- call-session: the connections first open `args[1]` sessions (POST initialize, read
-- Mcp-Session-Id, POST notifications/initialized), then loop POST tools/call on them.
--
-- wrk's callbacks don't say which connection they are for, so the thread keeps the sessions
-- in one pool: the first `args[1]` requests are the initializes (one per connection), each
-- initialize answer queues that session's notifications/initialized, each 202 makes the
-- oldest notified session free. A tools/call takes a free session and gives it back when its
-- answer comes (matched by JSON-RPC id), so with as many sessions as connections each
-- session carries one call at a time, as if every connection had its own. Ids are unique
-- among calls in flight. Servers run stateful.
-- ok / bad / non200 count tools/call answers as in call_stateless.lua; `inits` and `notified`
-- count the handshakes, `setup_bad` a 202 no notification was waiting for, `shared` calls sent
-- on a busy session because none was free.

local here = string.match(debug.getinfo(1, "S").source, "^@(.*/)") or "./"
local C = dofile(here .. "common.lua")

ok, bad, non200, inits, notified, setup_bad, shared = 0, 0, 0, 0, 0, 0, 0
local sessions_wanted = 16
local inits_sent = 0
local to_notify = {}     -- sessions whose initialize answered, not yet notified
local notifying = {}     -- FIFO of sessions whose notifications/initialized is in flight
local free = {}          -- sessions with no call in flight
local all = {}           -- every ready session
local by_id = {}         -- call id in flight -> session
local next_id = 0
local turn = 0
local RING = 4096        -- ids cycle; far more than the calls ever in flight

function setup(thread) C.setup(thread) end

function init(args)
  sessions_wanted = tonumber(args[1]) or 16
end

local function call(session)
  next_id = next_id % RING + 1
  by_id[next_id] = session
  return C.post(string.format(C.CALL, next_id), session)
end

function request()
  local n = #to_notify
  if n > 0 then
    local session = to_notify[n]
    to_notify[n] = nil
    notifying[#notifying + 1] = session
    return C.post(C.INITIALIZED, session)
  end
  if inits_sent >= sessions_wanted then
    n = #free
    if n > 0 then
      local session = free[n]
      free[n] = nil
      return call(session)
    end
    n = #all
    if n > 0 then
      shared = shared + 1
      turn = turn % n + 1
      return call(all[turn])
    end
  end
  inits_sent = inits_sent + 1
  return C.post(string.format(C.INIT, inits_sent))
end

function response(status, headers, body)
  if status == 200 then
    if C.is_call_result(body) then
      ok = ok + 1
    elseif C.is_init_result(body) then
      local session = C.header(headers, "mcp-session-id")
      if session then
        inits = inits + 1
        to_notify[#to_notify + 1] = session
      else
        setup_bad = setup_bad + 1
      end
      return
    else
      bad = bad + 1
    end
    local id = tonumber(string.match(body, '"id":%s*(%d+)'))
    local session = id and by_id[id]
    if session then
      by_id[id] = nil
    else
      session = C.header(headers, "mcp-session-id")  -- the bare app answers a fixed id
    end
    if session then free[#free + 1] = session end
  elseif status == 202 then
    local session = table.remove(notifying, 1)
    if session then
      notified = notified + 1
      all[#all + 1] = session
      free[#free + 1] = session
    else
      setup_bad = setup_bad + 1
    end
  else
    non200 = non200 + 1
    C.count_status(status)
  end
end

function done(summary, latency, requests)
  C.report(summary, latency, { "ok", "bad", "non200", "inits", "notified", "setup_bad", "shared" })
end
