/**
 * The Lua half of the nginx data plane (issue 32), loaded by `init_by_lua_block` into a table `edge` every phase
 * calls. What it keeps, all in shared dicts the control plane (src/edge/nginx/plane.ts) fills over the loopback
 * admin server, never read from the store per request:
 *
 *  - `edge_routes`: host name → "<kind>:<id> <host:port> <host:port>…", a public app with healthy replicas. A host
 *    without an entry (unknown, locked, static, idle, no replica, not pushed yet) goes to the platform's Node edge.
 *  - `edge_stats`: counters per minute, app and field (requests, 4xx, 5xx, bytes, latency bucket) of the answers
 *    nginx gave itself, drained by the platform every few seconds (`/stats`).
 *
 * The secret is the shared one of the config: Node trusts forwarding headers only with it, the admin server
 * answers only with it.
 */
export function luaInit(secret: string, routeTtlMs: number): string {
  return String.raw`
edge = {}
local routes = ngx.shared.edge_routes
local stats = ngx.shared.edge_stats
local SECRET = "${secret}"
local ROUTE_TTL = ${Math.max(0.001, routeTtlMs / 1000)}
local floor, log2 = math.floor, math.log
local parsed = {}
local parsed_n = 0

-- "<kind>:<id> a:p b:p" → { tk = "<kind>:<id>", { "a", p }, … }, kept per worker by value string
local function peers_of(v)
  local p = parsed[v]
  if p then return p end
  p = {}
  for word in v:gmatch("%S+") do
    if not p.tk then p.tk = word else
      local h, port = word:match("^(.+):(%d+)$")
      if h then p[#p + 1] = { h, tonumber(port) } end
    end
  end
  if parsed_n > 10000 then parsed = {} parsed_n = 0 end
  parsed[v] = p
  parsed_n = parsed_n + 1
  return p
end

local PLATFORM_COOKIES = { platform_session = true, platform_csrf = true, platform_suite_binding = true }

local function without_platform_cookies(header)
  local kept = {}
  for part in header:gmatch("[^;]+") do
    local name = part:match("^%s*([^=]-)%s*=")
    if not (name and PLATFORM_COOKIES[name]) then
      local trimmed = part:match("^%s*(.-)%s*$")
      if trimmed ~= "" then kept[#kept + 1] = trimmed end
    end
  end
  if #kept == 0 then return nil end
  return table.concat(kept, "; ")
end

local function to_node()
  ngx.var.edge_upstream = "edge_node"
  ngx.req.set_header("X-Platform-Edge", SECRET)
  ngx.req.clear_header("X-Platform-Edge-Failed")
end

-- access phase: a pushed public app goes to its replicas, everything else to the Node edge
function edge.access()
  local uri = ngx.var.uri
  if uri:find("/.platform/", 1, true) == 1 or uri:find("/.well-known/acme-challenge/", 1, true) == 1 then
    return to_node()
  end
  local v = routes:get(ngx.var.host)
  -- not a pushed app: a part of its own may answer (a static site: true) or name a route (nginx/static-lua.ts)
  if not v and edge.unrouted then
    v = edge.unrouted()
    if v == true then return end
  end
  if not v then return to_node() end
  local p = peers_of(v)
  if #p == 0 then return to_node() end
  local ctx = ngx.ctx
  ctx.tk = p.tk
  ctx.peers = p
  ngx.var.edge_upstream = "edge_apps"
  ngx.req.clear_header("X-Platform-Edge")
  ngx.req.clear_header("X-Platform-Edge-Failed")
  local cookie = ngx.var.http_cookie
  if cookie and cookie:find("platform_", 1, true) then
    ngx.req.set_header("Cookie", without_platform_cookies(cookie))
  end
  local connection = ngx.var.http_connection
  if connection then
    for name in connection:gmatch("[^,%s]+") do
      local lower = name:lower()
      if lower ~= "te" and lower ~= "upgrade" and lower ~= "keep-alive" and lower ~= "close" then
        ngx.req.clear_header(name)
      end
    end
  end
end

-- balancer: round robin per app across workers (a counter in edge_routes, "rr|<kind>:<id>", started where the
-- Node edge's rotation was when the route was pushed), every replica tried once; a GET/HEAD that failed on all of
-- them is re-run by the Node edge (error_page 502), which resolves the route afresh
function edge.balance()
  local b = require "ngx.balancer"
  local ctx = ngx.ctx
  local peers = ctx.peers
  local n = #peers
  local tries = ctx.tries
  if not tries then
    tries = 0
    ctx.start = 0
    if n > 1 then
      local v = routes:incr("rr|" .. peers.tk, 1, 0)
      ctx.start = ((v or 1) - 1) % n
      b.set_more_tries(n - 1)
    end
  end
  local peer = peers[(ctx.start + tries) % n + 1]
  ctx.tries = tries + 1
  local ok, err = b.set_current_peer(peer[1], peer[2])
  if not ok then ngx.log(ngx.ERR, "edge balancer: ", err) return ngx.exit(502) end
end

-- answer headers: an app never sets the platform's cookies; an answer of the Node edge names its app
-- ("<secret> <kind>:<id>"), so nginx counts it too: every answer is counted where its bytes were sent
function edge.answer()
  if not ngx.ctx.tk then
    local named = ngx.header["X-Platform-Edge-Target"]
    if named then
      ngx.header["X-Platform-Edge-Target"] = nil
      if type(named) == "table" then named = named[#named] end
      local secret, tk = named:match("^(%S+) (%S+)$")
      if secret == SECRET then ngx.ctx.tk = tk end
    end
    return
  end
  local set = ngx.header["Set-Cookie"]
  if not set then return end
  if type(set) == "string" then set = { set } end
  local kept, dropped = {}, false
  for _, v in ipairs(set) do
    local name = v:match("^%s*([^=]-)%s*=")
    if name and PLATFORM_COOKIES[name] then dropped = true else kept[#kept + 1] = v end
  end
  if dropped then ngx.header["Set-Cookie"] = (#kept > 0) and kept or nil end
end

-- statistics of nginx's own answers (the Node edge counts what it answered): the same buckets as histogram.ts
function edge.log()
  local tk = ngx.ctx.tk
  if not tk then return end
  local status = ngx.status
  if status == 101 then return end
  local ms = (tonumber(ngx.var.request_time) or 0) * 1000
  local bucket = 0
  if ms >= 1 then
    bucket = 1 + floor(4 * log2(ms) / log2(2))
    if bucket > 79 then bucket = 79 end
  end
  local prefix = (floor(ngx.time() / 60) * 60000) .. "|" .. tk .. "|"
  stats:incr(prefix .. "r", 1, 0)
  if status >= 500 then stats:incr(prefix .. "5", 1, 0) elseif status >= 400 then stats:incr(prefix .. "4", 1, 0) end
  stats:incr(prefix .. "b", tonumber(ngx.var.bytes_sent) or 0, 0)
  stats:incr(prefix .. "h" .. bucket, 1, 0)
end

local function admitted()
  if ngx.var.http_x_platform_edge ~= SECRET then ngx.status = 403 ngx.say("forbidden") return false end
  return true
end

-- an admin POST's body as an iterator over its lines; nil, after a 403, without the per-start secret. Every push
-- (routes here, sites and access in the extensions) is lines of "<op> <a> <rest>".
function edge.admin_lines()
  if not admitted() then return nil end
  ngx.req.read_body()
  local body = ngx.req.get_body_data()
  if not body then
    local file = ngx.req.get_body_file()
    if file then local f = io.open(file, "rb") body = f:read("*a") f:close() end
  end
  return (body or ""):gmatch("[^\n]+")
end

-- sets a key of a shared dict (ttl: seconds, none for 0), logged when the dict is full (the key is then missing)
function edge.dict_set(dict, what, key, value, ttl)
  local ok, err = dict:set(key, value, ttl or 0)
  if not ok then ngx.log(ngx.ERR, "edge ", what, " full: ", err) end
end

-- an admin push: each line of the body given to apply(op, a, rest); answers how many lines it read
function edge.apply_push(apply)
  local lines = edge.admin_lines()
  if not lines then return end
  local n = 0
  for line in lines do
    apply(line:match("^(%S+) ?(%S*) ?(.*)$"))
    n = n + 1
  end
  ngx.say(n)
end

-- POST /routes: lines "set <host> <value>", "del <host>", "rr <kind>:<id> <next>" (a rotation's start), "flush"
function edge.push()
  edge.apply_push(function(op, host, value)
    if op == "set" then edge.dict_set(routes, "routes", host, value, ROUTE_TTL)
    elseif op == "del" then routes:delete(host)
    elseif op == "rr" then routes:add("rr|" .. host, tonumber(value) or 0)
    elseif op == "flush" then routes:flush_all() end
  end)
end

-- GET /stats: every counter as "<minute>|<kind>:<id>|<field> <count>", taken out of the dict
function edge.drain()
  if not admitted() then return end
  local current = floor(ngx.time() / 60) * 60000
  local out = {}
  for _, k in ipairs(stats:get_keys(0)) do
    local v = stats:get(k)
    if v and v ~= 0 then
      out[#out + 1] = k .. " " .. v
      local minute = tonumber(k:match("^(%d+)|"))
      if minute and minute < current then stats:delete(k) else stats:incr(k, -v) end
    elseif v == 0 then
      local minute = tonumber(k:match("^(%d+)|"))
      if minute and minute < current then stats:delete(k) end
    end
  end
  ngx.print(table.concat(out, "\n"))
end

-- kept as a hook: an nginx outliving its platform is stopped by the next start (process.ts, its pid file)
function edge.watch() end
`;
}
