-- call-modern: every request is the same 2026-07-28 POST tools/call: no initialize, no session;
-- the body's _meta names the version, client capabilities and client, and the headers carry
-- MCP-Protocol-Version plus SEP-2243's Mcp-Method / Mcp-Name. A response counts as ok when it
-- is a 200 carrying add(1, 2)'s result with `resultType: "complete"`; a 200 without it is
-- `bad`, any other status `non200`. An optional second script argument pipelines: each write
-- carries that many requests (HTTP/1.1 pipelining), so wrk spends less CPU per call.

local here = string.match(debug.getinfo(1, "S").source, "^@(.*/)") or "./"
local C = dofile(here .. "common.lua")

local HEADERS = {
  { "MCP-Protocol-Version", "2026-07-28" },
  { "Mcp-Method", "tools/call" },
  { "Mcp-Name", "add" },
}

ok, bad, non200 = 0, 0, 0
local req

function setup(thread) C.setup(thread) end

function init(args)
  req = string.rep(C.post_with(string.format(C.CALL_MODERN, 1), HEADERS), tonumber(args[2]) or 1)
end

function request()
  return req
end

function response(status, headers, body)
  C.count_call(status, body, C.is_modern_call_result)
end

function done(summary, latency, requests)
  C.report(summary, latency, { "ok", "bad", "non200" })
end
