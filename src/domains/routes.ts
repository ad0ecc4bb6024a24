import { Type } from "@sinclair/typebox";
import { callerOf } from "../auth/principal.js";
import { Body, NoContent } from "../http/schemas.js";
import { route, type Route } from "../http/route.js";
import { noContentAfter } from "../http/no-content.js";
import type { DomainsState } from "./service.js";
import { AppParams, Autosetup, Domain, DomainParams, IdParams, Provider, tags, Verification } from "./schemas.js";
import { domainView } from "./view.js";

const read = { scope: "domains:read", instance: { param: "id" } } as const;
const write = { scope: "domains:write", instance: { param: "id" } } as const;

/** Custom domains (spec: "Custom domains"; README.md here). DNS and Cloudflare work happens in the service. */
export function domainRoutes(state: DomainsState): Route[] {
  const { service: svc, config } = state;
  const view = (entry: Parameters<typeof domainView>[0]) => domainView(entry, config);

  return [
    route({
      method: "GET",
      url: "/v1/apps/:slug/domains",
      operationId: "listAppDomains",
      tags,
      summary: "The custom domains of one of the caller's apps (pod, pod group or static site, by slug).",
      summaryKo: "앱의 커스텀 도메인 목록.",
      auth: { scope: "domains:read", instance: "list" },
      params: AppParams,
      response: { 200: Type.Array(Domain) },
      handler: async (request) =>
        (await svc.list(callerOf(request), request.params.slug, request.instanceFilter)).map(view),
    }),
    route({
      method: "POST",
      url: "/v1/apps/:slug/domains",
      operationId: "addAppDomain",
      tags,
      summary:
        "Add a custom domain to an app: 201 pending, with the TXT and CNAME records either of which verifies it. It is served only after POST …/verify succeeds. One domain belongs to one app platform-wide (409 domain_taken).",
      summaryKo: "커스텀 도메인을 추가합니다(검증 전에는 연결되지 않음).",
      auth: { scope: "domains:write", instance: "create" },
      errors: ["domain_taken"],
      params: AppParams,
      body: Body({
        domain: Type.String({
          minLength: 1,
          maxLength: 253,
          description: "e.g. www.example.com; internationalized names are stored in their xn-- form",
        }),
      }),
      response: { 201: Domain },
      handler: async (request, reply) =>
        reply.code(201).send(view(await svc.add(callerOf(request), request.params.slug, request.body.domain))),
    }),
    route({
      method: "DELETE",
      url: "/v1/apps/:slug/domains/:id",
      operationId: "deleteAppDomain",
      tags,
      summary: "Delete one of the app's domains; the edge stops serving it at once.",
      summaryKo: "앱의 커스텀 도메인을 삭제합니다.",
      auth: write,
      params: DomainParams,
      response: { 204: NoContent },
      handler: async (request, reply) =>
        noContentAfter(reply, svc.remove(callerOf(request), request.params.slug, request.params.id)),
    }),
    route({
      method: "POST",
      url: "/v1/apps/:slug/domains/:id/verify",
      operationId: "verifyAppDomain",
      tags,
      summary:
        "DNS verification: the TXT record _platform-verify.<domain> holding the token, or <domain> a CNAME to <slug>.<APPS_DOMAIN>. 200 either way: verified true (served by the edge within a second, a TLS certificate is requested) or false with the reason and what DNS answered (a DNS timeout is such an answer, never an error). Retry after changing DNS.",
      summaryKo: "DNS로 도메인 소유를 확인합니다.",
      auth: write,
      params: DomainParams,
      response: { 200: Verification },
      handler: async (request) => {
        const { check, ...entry } = await svc.verify(callerOf(request), request.params.slug, request.params.id);
        return {
          verified: entry.row.status === "verified",
          method: entry.row.verified_by,
          reason: check?.reason ?? null,
          checks: check && { txt: check.txt, cname: check.cname },
          domain: view(entry),
        };
      },
    }),
    route({
      method: "GET",
      url: "/v1/apps/:slug/domains/:id/dns-provider",
      operationId: "detectDomainDnsProvider",
      tags,
      summary:
        "Detect the domain's DNS provider from the NS records of the domain or its nearest parent that has them. provider unknown when none matched or DNS did not answer (problem says why).",
      summaryKo: "도메인의 DNS 제공자를 NS 레코드로 알아냅니다.",
      auth: read,
      params: DomainParams,
      response: { 200: Provider },
      handler: async (request) => {
        const { row, guess } = await svc.dnsProvider(callerOf(request), request.params.slug, request.params.id);
        return { domain: row.domain, ...guess };
      },
    }),
    route({
      method: "POST",
      url: "/v1/apps/:slug/domains/:id/cf-autosetup",
      operationId: "autosetupDomainCloudflare",
      tags,
      summary:
        "Write the verification TXT record and the CNAME to the app's host into the domain's Cloudflare zone with the caller's API token (Zone:Read and DNS:Edit; used for this call only, never stored). Existing records of the same name and type are updated. Then call verify. Cloudflare refusing the token: 400; other Cloudflare failures: 502 provider_error with Cloudflare's message.",
      summaryKo: "Cloudflare API로 DNS 레코드를 자동 등록합니다.",
      auth: write,
      errors: ["provider_error"],
      params: DomainParams,
      body: Body({
        api_token: Type.String({ minLength: 1, maxLength: 512, description: "a Cloudflare API token" }),
        proxied: Type.Optional(
          Type.Boolean({
            default: false,
            description:
              "proxy the CNAME through Cloudflare (then only the TXT record can verify, since Cloudflare answers with its own addresses)",
          }),
        ),
      }),
      response: { 200: Autosetup },
      handler: async (request) => {
        const out = await svc.cloudflareAutosetup(
          callerOf(request),
          request.params.slug,
          request.params.id,
          request.body,
        );
        return { zone: out.zone, records: out.records, domain: view({ row: out.row, appExists: true }) };
      },
    }),
    route({
      method: "GET",
      url: "/v1/domains",
      operationId: "listDomains",
      tags,
      summary: "All of the caller's custom domains, with app_exists: whether the app still exists.",
      summaryKo: "내 모든 커스텀 도메인(앱 존재 여부 포함).",
      auth: { scope: "domains:read", instance: "list" },
      response: { 200: Type.Array(Domain) },
      handler: async (request) => (await svc.listAll(callerOf(request), request.instanceFilter)).map(view),
    }),
    route({
      method: "DELETE",
      url: "/v1/domains/:id",
      operationId: "deleteDomain",
      tags,
      summary:
        "Unregister a domain even if its app was deleted. With ?orphan_only=1 only a domain whose app is gone is removed; while the app exists the answer is 409 domain_in_use.",
      summaryKo: "커스텀 도메인 등록을 해제합니다.",
      auth: write,
      errors: ["domain_in_use"],
      params: IdParams,
      query: Type.Object({
        orphan_only: Type.Optional(
          Type.Unsafe<"1" | "0" | "true" | "false">({
            type: "string",
            enum: ["1", "0", "true", "false"],
            description: "1 (or true): remove only if the app is gone",
          }),
        ),
      }),
      response: { 204: NoContent },
      handler: async (request, reply) =>
        noContentAfter(
          reply,
          svc.removeById(
            callerOf(request),
            request.params.id,
            ["1", "true"].includes(request.query.orphan_only ?? "0"),
          ),
        ),
    }),
  ];
}
