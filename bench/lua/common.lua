-- Shared by the scenario scripts: hand-built MCP requests, response checks, the report.
-- A scenario script loads it with dofile() from its own folder. Counters live in the
-- thread's Lua state; done() (main state) sums them over threads.

local M = {}

local host = wrk.host .. ":" .. tostring(wrk.port or 80)
local path = wrk.path
if path == nil or path == "" then path = "/" end

local BASE_HEAD = "POST " .. path .. " HTTP/1.1\r\n"
  .. "Host: " .. host .. "\r\n"
  .. "Accept: application/json, text/event-stream\r\n"
  .. "Content-Type: application/json\r\n"
local POST_HEAD = BASE_HEAD .. "MCP-Protocol-Version: 2025-11-25\r\n"

M.CALL = '{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}'
M.INIT = '{"jsonrpc":"2.0","id":%d,"method":"initialize","params":{"protocolVersion":"2025-11-25",'
  .. '"capabilities":{},"clientInfo":{"name":"wrk","version":"1"}}}'
M.INITIALIZED = '{"jsonrpc":"2.0","method":"notifications/initialized"}'
-- 2026-07-28: no handshake; the version, capabilities and client travel in every request's _meta.
M.CALL_MODERN = '{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2},'
  .. '"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
  .. '"io.modelcontextprotocol/clientCapabilities":{},'
  .. '"io.modelcontextprotocol/clientInfo":{"name":"wrk","version":"1"}}}}'

-- A POST of `body`, with the session header when `session` is given.
function M.post(body, session)
  local s = POST_HEAD
  if session then s = s .. "Mcp-Session-Id: " .. session .. "\r\n" end
  return s .. "Content-Length: " .. #body .. "\r\n\r\n" .. body
end

-- A POST of `body` with `headers` ({{name, value}, ...}) instead of the handshake-era
-- version header: what a 2026-07-28 request needs (its version, Mcp-Method, Mcp-Name).
function M.post_with(body, headers)
  local s = BASE_HEAD
  for _, h in ipairs(headers) do s = s .. h[1] .. ": " .. h[2] .. "\r\n" end
  return s .. "Content-Length: " .. #body .. "\r\n\r\n" .. body
end

function M.delete(session)
  return "DELETE " .. path .. " HTTP/1.1\r\nHost: " .. host .. "\r\n"
    .. "MCP-Protocol-Version: 2025-11-25\r\nMcp-Session-Id: " .. session .. "\r\n\r\n"
end

-- A response header by name, whatever case the server wrote it in.
function M.header(headers, name)
  local v = headers[name]
  if v then return v end
  for k, value in pairs(headers) do
    if string.lower(k) == name then return value end
  end
  return nil
end

-- The tools/call result of add(1, 2), as JSON or as an SSE `data:` line: text "3", not an error.
function M.is_call_result(body)
  return string.find(body, '"text":%s*"3"') ~= nil and string.find(body, '"isError":%s*true') == nil
end

-- The same, answered in the 2026-07-28 shape: it must also say `resultType: "complete"`
-- (a server that ignored the era would answer a handshake-era result without it).
function M.is_modern_call_result(body)
  return M.is_call_result(body) and string.find(body, '"resultType":%s*"complete"') ~= nil
end

function M.is_init_result(body)
  return string.find(body, '"serverInfo"', 1, true) ~= nil
end

-- Counts one answer to a tools/call into the scenario's ok / bad / non200 (globals of the
-- calling thread): a 200 is ok when `is_result(body)`, else bad.
function M.count_call(status, body, is_result)
  if status ~= 200 then
    non200 = non200 + 1
    M.count_status(status)
  elseif is_result(body) then
    ok = ok + 1
  else
    bad = bad + 1
  end
end

-- Unexpected statuses, as "code:count,code:count" (a string: it crosses Lua states in done()).
local code_counts = {}
codes = ""

function M.count_status(status)
  code_counts[status] = (code_counts[status] or 0) + 1
  local parts = {}
  for code, n in pairs(code_counts) do parts[#parts + 1] = code .. ":" .. n end
  codes = table.concat(parts, ",")
end

-- done(): one line the runner parses, `BENCH_RESULT {json}`.
local threads = {}

function M.setup(thread)
  threads[#threads + 1] = thread
end

function M.report(summary, latency, names)
  local parts = {}
  local function add(k, v) parts[#parts + 1] = string.format('"%s":%s', k, tostring(v)) end
  add("duration_us", summary.duration)
  add("requests", summary.requests)
  add("bytes", summary.bytes)
  add("err_connect", summary.errors.connect)
  add("err_read", summary.errors.read)
  add("err_write", summary.errors.write)
  add("err_status", summary.errors.status)
  add("err_timeout", summary.errors.timeout)
  add("lat_mean_us", string.format("%.1f", latency.mean))
  add("lat_p50_us", latency:percentile(50))
  add("lat_p99_us", latency:percentile(99))
  add("lat_max_us", latency.max)
  local all_codes = {}
  for _, t in ipairs(threads) do
    local c = t:get("codes")
    if c and c ~= "" then all_codes[#all_codes + 1] = c end
  end
  add("codes", '"' .. table.concat(all_codes, ",") .. '"')
  for _, name in ipairs(names) do
    local total = 0
    for _, t in ipairs(threads) do total = total + (tonumber(t:get(name)) or 0) end
    add(name, total)
  end
  io.write("BENCH_RESULT {" .. table.concat(parts, ",") .. "}\n")
end

return M
