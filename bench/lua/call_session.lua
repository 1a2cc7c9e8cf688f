-- call-session: the connections first open `args[1]` sessions (POST initialize, read
-- Mcp-Session-Id, POST notifications/initialized), then loop POST tools/call over them.
--
-- wrk's callbacks don't say which connection they are for, so sessions form one pool for the
-- thread: the first `args[1]` requests are the initializes (one per connection), each
-- initialize answer queues that session's notifications/initialized, each 202 makes the
-- oldest notified session ready, and tools/call requests take the ready sessions in turn.
-- Servers run stateful. ok / bad / non200 count tools/call answers as in call_stateless.lua;
-- `inits` and `notified` count the handshakes, `setup_bad` any handshake answer that was wrong.

local here = string.match(debug.getinfo(1, "S").source, "^@(.*/)") or "./"
local C = dofile(here .. "common.lua")

ok, bad, non200, inits, notified, setup_bad = 0, 0, 0, 0, 0, 0
local sessions_wanted = 16
local inits_sent = 0
local to_notify = {}     -- sessions whose initialize answered, not yet notified
local notifying = {}     -- FIFO of sessions whose notifications/initialized is in flight
local ready = {}         -- tools/call request strings, one per ready session
local turn = 0

function setup(thread) C.setup(thread) end

function init(args)
  sessions_wanted = tonumber(args[1]) or 16
end

function request()
  local n = #to_notify
  if n > 0 then
    local session = to_notify[n]
    to_notify[n] = nil
    notifying[#notifying + 1] = session
    return C.post(C.INITIALIZED, session)
  end
  local r = #ready
  if r > 0 and inits_sent >= sessions_wanted then
    turn = turn % r + 1
    return ready[turn]
  end
  inits_sent = inits_sent + 1
  return C.post(string.format(C.INIT, inits_sent))
end

function response(status, headers, body)
  if status == 200 then
    if C.is_call_result(body) then
      ok = ok + 1
      return
    end
    local session = C.header(headers, "mcp-session-id")
    if session and C.is_init_result(body) then
      inits = inits + 1
      to_notify[#to_notify + 1] = session
      return
    end
    bad = bad + 1
  elseif status == 202 then
    local session = table.remove(notifying, 1)
    if session then
      notified = notified + 1
      ready[#ready + 1] = C.post(string.format(C.CALL, #ready + 1), session)
    else
      setup_bad = setup_bad + 1
    end
  else
    non200 = non200 + 1
    C.count_status(status)
  end
end

function done(summary, latency, requests)
  C.report(summary, latency, { "ok", "bad", "non200", "inits", "notified", "setup_bad" })
end
