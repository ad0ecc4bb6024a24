import type { NginxConfExtension } from "./conf.js";

/**
 * nginx's half of the cached access decisions (access-cache.ts): `edge_locked` holds locked hosts' routes
 * ("a <kind>:<id> <replicas>" or "s <site value>"), `edge_access` the admissions the Node edge pushed, keyed by
 * host and the deciding cookies' raw values, each with the lifetime left of the Node edge's own decision. A host
 * in `edge_locked` whose visitor has an admission is answered here (proxied like a public app, or served like a
 * public site); without one the request goes to the Node edge, which decides (and pushes the next admission).
 * `edge_access` is a bounded shared dict: when full, the least recently used admissions go first.
 */
export function accessExtension(): NginxConfExtension {
  return {
    http: "  lua_shared_dict edge_locked 8m;\n  lua_shared_dict edge_access 16m;\n",
    lua: ACCESS_LUA,
    admin: "    location = /access { content_by_lua_block { edge.push_access() } }\n",
    server: "",
  };
}

const ACCESS_LUA = String.raw`
do
local locked = ngx.shared.edge_locked
local access = ngx.shared.edge_access
local sub = string.sub

-- a locked host's route when this visitor was admitted (true: its site's file was answered), else nil
function edge.admitted()
  local host = ngx.var.host
  local v = locked:get(host)
  if not v then return nil end
  local vars = ngx.var
  local session = vars.cookie_platform_session or ""
  local key = host .. "|" .. #session .. "|" .. session .. (vars.cookie_platform_visitor or "")
  if not access:get(key) then return nil end
  local kind = sub(v, 1, 2)
  if kind == "a " then return sub(v, 3) end
  if kind == "s " and edge.serve_site and edge.serve_site(sub(v, 3)) then return true end
  return nil
end

-- without static sites (no static-lua.ts), the proxy path's hook asks this alone
if not edge.unrouted then edge.unrouted = edge.admitted end

-- POST /access: "lock <host> <value>", "unlock <host>", "admit <seconds> <key>", "forget" (admissions),
-- "flush" (admissions and locked hosts)
function edge.push_access()
  edge.apply_push(function(op, a, b)
    if op == "lock" then edge.dict_set(locked, "locked hosts", a, b)
    elseif op == "unlock" then locked:delete(a)
    elseif op == "admit" then access:set(b, true, tonumber(a) or 1)
    elseif op == "forget" then access:flush_all()
    elseif op == "flush" then access:flush_all() locked:flush_all() end
  end)
end
end
`;
