import type { NginxConfExtension } from "./conf.js";
import { KEY_MARK } from "./tls.js";

export interface TlsExtensionOptions {
  host: string;
  /** EDGE_TLS_PORT as nginx binds it */
  port: number;
  /** the fallback certificate and key, one PEM file */
  fallback: string;
  /** tls.ts's certificate server on loopback */
  certPort: number;
  secret: string;
}

/**
 * nginx's half of HTTPS (tls.ts): the visitors' server also listens on EDGE_TLS_PORT with the fallback certificate,
 * and `ssl_certificate_by_lua` replaces it by the SNI name's from `edge_certs` (asked of the platform on a miss,
 * over a cosocket, kept as long as the platform says; an empty entry means "none: the fallback").
 */
export function tlsExtension(o: TlsExtensionOptions): NginxConfExtension {
  return {
    http: "  lua_shared_dict edge_certs 16m;\n",
    lua: tlsLua(o),
    admin: "    location = /certs { content_by_lua_block { edge.push_certs() } }\n",
    server: `
    listen ${o.host.includes(":") ? `[${o.host}]` : o.host}:${o.port} ssl;
    ssl_certificate ${o.fallback};
    ssl_certificate_key ${o.fallback};
    ssl_session_cache shared:edge_tls:16m;
    ssl_certificate_by_lua_block { edge.cert() }
`,
  };
}

function tlsLua(o: TlsExtensionOptions): string {
  return String.raw`
do
local certs = ngx.shared.edge_certs
local CERT_SECRET = "${o.secret}"
local CERT_PORT = ${o.certPort}
local parsed, parsed_n = {}, 0

-- "<seconds>\n<chain>\n${KEY_MARK}\n<key>" or "<seconds>\n" (none), from tls.ts; nil when it did not answer
local function fetch(name)
  local sock = ngx.socket.tcp()
  sock:settimeout(5000)
  local ok = sock:connect("127.0.0.1", CERT_PORT)
  if not ok then return nil end
  sock:send("GET /cert?host=" .. name .. " HTTP/1.0\r\nHost: edge\r\nX-Platform-Edge: " .. CERT_SECRET .. "\r\n\r\n")
  local data = sock:receive("*a")
  sock:close()
  if not data or not data:match("^HTTP/1%.%d 200") then return nil end
  return data:match("\r\n\r\n(.*)$")
end

function edge.cert()
  local ssl = require "ngx.ssl"
  local name = ssl.server_name()
  if not name then return end
  name = name:lower():gsub("%.$", "")
  if not name:match("^[%w%.%-]+$") then return end
  local v = certs:get(name)
  if v == nil then
    local body = fetch(name)
    if not body then return end
    local seconds, rest = body:match("^(%d+)\n(.*)$")
    v = rest or ""
    seconds = tonumber(seconds) or 0
    if seconds > 0 then certs:set(name, v, seconds) end
  end
  if v == "" then return end
  local c = parsed[v]
  if not c then
    local chain, key = v:match("^(.-)\n${KEY_MARK.replace(/-/g, "%-")}\n(.*)$")
    if not chain then return end
    local cert, err = ssl.parse_pem_cert(chain)
    local pkey, err2 = ssl.parse_pem_priv_key(key)
    if not cert or not pkey then ngx.log(ngx.ERR, "edge certificate for ", name, ": ", err or err2) return end
    c = { cert, pkey }
    if parsed_n >= 1000 then parsed, parsed_n = {}, 0 end
    parsed[v] = c
    parsed_n = parsed_n + 1
  end
  local ok, err = ssl.clear_certs()
  if ok then ok, err = ssl.set_cert(c[1]) end
  if ok then ok, err = ssl.set_priv_key(c[2]) end
  if not ok then ngx.log(ngx.ERR, "edge certificate for ", name, ": ", err) end
end

-- POST /certs: "del <host>", "flush"
function edge.push_certs()
  if ngx.var.http_x_platform_edge ~= CERT_SECRET then ngx.status = 403 ngx.say("forbidden") return end
  ngx.req.read_body()
  local n = 0
  for line in (ngx.req.get_body_data() or ""):gmatch("[^\n]+") do
    local op, host = line:match("^(%S+) ?(%S*)$")
    if op == "del" then certs:delete(host) elseif op == "flush" then certs:flush_all() end
    n = n + 1
  end
  ngx.say(n)
end
end
`;
}
