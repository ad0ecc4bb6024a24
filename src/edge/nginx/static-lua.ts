import path from "node:path";
import type { NginxConfExtension } from "./conf.js";

/**
 * nginx's half of static sites (static.ts materialises and pushes; README "Static sites in nginx"). The Lua below
 * answers a host held in `edge_sites` as static-serve.ts does: the same path → file rules (exact, `.html`,
 * `/index.html`, folders' index.html, the SPA fallback, the site's 404 page), the same encoding choice, strong
 * ETag and If-None-Match (304 answered in Lua), the same Cache-Control, then hands the file to nginx's static
 * module (sendfile) in a named location. What it does not answer goes to the Node edge: methods other than GET and
 * HEAD (405), a path with no file and no 404 page of the site (the edge's 404 page), a deployment not materialised
 * yet. Statistics are counted by the plane's `edge.log()` under the site's "site:<id>".
 */
export function staticExtension(dir: string, secret: string, nodePort: number): NginxConfExtension {
  return {
    http: "  lua_shared_dict edge_sites 8m;\n",
    lua: staticLua(dir),
    admin: "    location = /sites { content_by_lua_block { edge.push_sites() } }\n",
    server: `
    # a site's file, chosen by edge.site() (variables survive the internal redirect, ngx.ctx does not)
    location @edge_site {
      root ${path.join(dir, "blobs")};
      try_files $edge_site_file @edge_site_node;
      etag off;
      if_modified_since off;
      types { }
      default_type application/octet-stream;
      header_filter_by_lua_block { edge.site_headers() }
      log_by_lua_block { edge.site_log() }
    }
    # the file is gone (swept under a request): the Node edge answers from the store
    location @edge_site_node {
      proxy_pass http://127.0.0.1:${nodePort};
      proxy_set_header Host $http_host;
      proxy_set_header Connection "";
      proxy_set_header X-Forwarded-For $remote_addr;
      proxy_set_header X-Forwarded-Proto $scheme;
      proxy_set_header X-Forwarded-Host $http_host;
      proxy_set_header X-Forwarded-Port $server_port;
      proxy_set_header X-Platform-Edge "${secret}";
    }
    # never matched by a request: declares the variables edge.site() sets
    location = /.platform/edge-site-variables {
      internal;
      set $edge_site_file "";
      set $edge_site_tk "";
      set $edge_site_type "";
      set $edge_site_status "";
      set $edge_site_etag "";
      set $edge_site_cc "";
      set $edge_site_enc "";
      set $edge_site_vary "";
      return 404;
    }
`,
  };
}

function staticLua(dir: string): string {
  return String.raw`
do
local sites = ngx.shared.edge_sites
local DEPLOYMENTS = "${path.join(dir, "deployments")}/"
local parsed, parsed_n = {}, 0
local manifests, manifests_n = {}, 0
local encodings, encodings_n = {}, 0
local find, sub = string.find, string.sub

-- "<kind>:<id>\t<deployment>\t<spa 0|1>\t<404 page>"
local function site_of(v)
  local s = parsed[v]
  if s then return s end
  local tk, dep, spa, nf = v:match("^([^\t]*)\t([%w%-]+)\t([01])\t(.*)$")
  if not tk then return nil end
  s = { tk = tk, dep = dep, spa = spa == "1", nf = nf ~= "" and nf or nil }
  if parsed_n > 10000 then parsed, parsed_n = {}, 0 end
  parsed[v] = s
  parsed_n = parsed_n + 1
  return s
end

-- a deployment's index (path → { hash, type, flags }), read once per worker: a deployment never changes
local function manifest_of(dep)
  local m = manifests[dep]
  if m then return m end
  local f = io.open(DEPLOYMENTS .. dep, "rb")
  if not f then return nil end
  m = {}
  for line in f:lines() do
    local p, h, t, fl = line:match("^([^\t]*)\t(%x+)\t([^\t]*)\t([^\t]*)$")
    if p then m[p] = { h, t, fl } end
  end
  f:close()
  if manifests_n >= 256 then manifests, manifests_n = {}, 0 end
  manifests[dep] = m
  manifests_n = manifests_n + 1
  return m
end

-- static-serve.ts lookup()
local function lookup(m, p, s)
  local e
  if p == "" or sub(p, -1) == "/" then e = m[p .. "index.html"]
  else e = m[p] or m[p .. ".html"] or m[p .. "/index.html"] end
  if e then return e, 200 end
  local last = p:match("([^/]*)$") or ""
  if s.spa and not find(last, ".", 1, true) then
    e = m["index.html"]
    if e then return e, 200 end
  end
  if s.nf then
    e = m[s.nf]
    if e then return e, 404 end
  end
  return nil
end

-- static-serve.ts chooseEncoding(): br unless gzip ranks higher, q=0 refuses
local function choose(header)
  if not header or header == "" then return false end
  local c = encodings[header]
  if c ~= nil then return c end
  local br, gz = 0, 0
  for part in header:gmatch("[^,]+") do
    local name, params = part:match("^%s*(.-)%s*$"):lower():match("^([^;]*)(.*)$")
    local q = 1
    for param in params:gmatch(";([^;]*)") do
      local pt = param:match("^%s*(.-)%s*$")
      if sub(pt, 1, 2) == "q=" then
        q = tonumber(sub(pt, 3)) or 0
        if q ~= q or q == math.huge or q == -math.huge then q = 0 end
        break
      end
    end
    if name == "x-gzip" then name = "gzip" end
    if name == "br" then br = q elseif name == "gzip" then gz = q end
  end
  if br > 0 and br >= gz then c = "br" elseif gz > 0 then c = "gzip" else c = false end
  if encodings_n >= 256 then encodings, encodings_n = {}, 0 end
  encodings[header] = c
  encodings_n = encodings_n + 1
  return c
end

-- If-None-Match naming any representation of the content (weak or strong), or *
local function not_modified(header, hash)
  for raw in header:gmatch("[^,]+") do
    local tag = (raw:match("^%s*(.-)%s*$"):gsub("^W/", ""))
    if tag == "*" then return true end
    tag = tag:gsub('^"', ""):gsub('"$', ""):gsub("%-br$", "")
    tag = tag:gsub("%-gzip$", "")
    if tag == hash then return true end
  end
  return false
end

-- true when nginx answers the request as a file of a held site (the caller returns); false: not a site here
function edge.site()
  local v = sites:get(ngx.var.host)
  if not v then return false end
  return edge.serve_site(v)
end

-- a site's value as edge_sites holds it (access-lua.ts passes a locked site's once its visitor is admitted)
function edge.serve_site(v)
  local method = ngx.req.get_method()
  if method ~= "GET" and method ~= "HEAD" then return false end
  local s = site_of(v)
  if not s then return false end
  local m = manifest_of(s.dep)
  if not m then return false end
  local e, status = lookup(m, (ngx.var.uri:gsub("^/+", "")), s)
  if not e then return false end
  local hash, ctype, flags = e[1], e[2], e[3]
  local vary = find(flags, "v", 1, true) ~= nil
  local enc, suffix = nil, ""
  if vary then
    local c = choose(ngx.var.http_accept_encoding)
    if c == "br" and find(flags, "b", 1, true) then enc, suffix = "br", ".br"
    elseif c == "gzip" and find(flags, "g", 1, true) then enc, suffix = "gzip", ".gz" end
  end
  local cc = "public, max-age=0, must-revalidate"
  if status ~= 200 or find(ctype, "text/html", 1, true) == 1 then cc = "no-cache" end
  local etag = ""
  if status == 200 then etag = '"' .. hash .. (enc and ("-" .. enc) or "") .. '"' end
  ngx.ctx.tk = s.tk
  if etag ~= "" then
    local inm = ngx.var.http_if_none_match
    if inm and not_modified(inm, hash) then
      ngx.status = 304
      ngx.header["ETag"] = etag
      ngx.header["Cache-Control"] = cc
      if vary then ngx.header["Vary"] = "Accept-Encoding" end
      ngx.send_headers()
      ngx.exit(ngx.HTTP_OK)
      return true
    end
  end
  local vars = ngx.var
  vars.edge_site_file = "/" .. sub(hash, 1, 2) .. "/" .. hash .. suffix
  vars.edge_site_tk = s.tk
  vars.edge_site_type = ctype
  vars.edge_site_status = tostring(status)
  vars.edge_site_etag = etag
  vars.edge_site_cc = cc
  vars.edge_site_enc = enc or ""
  vars.edge_site_vary = vary and "Accept-Encoding" or ""
  ngx.exec("@edge_site")
  return true
end

function edge.site_headers()
  local vars, h = ngx.var, ngx.header
  if ngx.status == 200 and vars.edge_site_status == "404" then ngx.status = 404 end
  h["Content-Type"] = vars.edge_site_type
  h["X-Content-Type-Options"] = "nosniff"
  h["Cache-Control"] = vars.edge_site_cc
  h["Last-Modified"] = nil
  if vars.edge_site_etag ~= "" then h["ETag"] = vars.edge_site_etag end
  if vars.edge_site_enc ~= "" then h["Content-Encoding"] = vars.edge_site_enc end
  if vars.edge_site_vary ~= "" then h["Vary"] = vars.edge_site_vary end
end

function edge.site_log()
  if ngx.var.upstream_addr then return end -- handed to the Node edge (@edge_site_node), which counts it
  ngx.ctx.tk = ngx.var.edge_site_tk
  edge.log()
end

-- the proxy path's hook for a host it holds no route for (lua.ts edge.access): a site's file, or nothing
function edge.unrouted()
  if edge.site() then return true end
  if edge.admitted then return edge.admitted() end
  return nil
end

-- POST /sites: lines "set <host> <value>", "del <host>", "flush"
function edge.push_sites()
  edge.apply_push(function(op, host, value)
    if op == "set" then edge.dict_set(sites, "sites", host, value)
    elseif op == "del" then sites:delete(host)
    elseif op == "flush" then sites:flush_all() end
  end)
end
end
`;
}
