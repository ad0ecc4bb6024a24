import { describeAuth } from "../http/auth-rule.js";
import type { RouteEntry } from "../http/route-table.js";
import { ERROR_CATALOG, type ErrorCode } from "../http/errors.js";

interface ManualContext {
  baseDomain: string;
  edition: string;
}

const TEXT = {
  en: {
    title: "Hosting platform API manual (for AI agents and scripts)",
    intro: [
      "Every path begins with /v1. Bodies are JSON. Send Authorization: Bearer <token> unless an endpoint is public.",
      "Tokens: op_u_… is a full-access account token (from POST /v1/auth/signup or /v1/auth/login); opk_… is a scoped key from POST /v1/api-keys.",
      "Scopes: resource:read|write|*, or * for everything; write includes read. Instance-limited: resource:action:{id|slug}.",
      'Every error is {"error":{"code","message"}}. 401 auth_required, 403 scope_insufficient, 404 not_found, 429 too_many_requests (see Retry-After).',
      "Retries: send an Idempotency-Key header on POST; a retry with the same key and body replays the first answer.",
      "Asynchronous operations answer 202 with command_id; poll the resource's state.",
    ],
    quick: [
      '1. POST /v1/auth/signup {"email","password"} -> token (op_u_...).',
      "2. GET /v1/me with Authorization: Bearer <token>.",
      '3. POST /v1/api-keys {"name","scopes":["databases:read"]} -> a scoped key for automation.',
      "4. GET /v1/manual for every endpoint; GET /v1/openapi.json for the machine-readable description.",
    ],
    endpoints: "Endpoints",
    auth: "auth",
    errors:
      "Error codes (HTTP status, code: meaning). The code decides the status; branch on the code, not the message",
  },
  ko: {
    title: "호스팅 플랫폼 API 설명서 (AI 에이전트와 스크립트용)",
    intro: [
      "모든 경로는 /v1로 시작합니다. 본문은 JSON입니다. 공개 엔드포인트가 아니면 Authorization: Bearer <토큰>을 보냅니다.",
      "토큰: op_u_…는 전체 권한 계정 토큰(POST /v1/auth/signup 또는 /v1/auth/login), opk_…는 POST /v1/api-keys로 만든 범위 제한 키입니다.",
      "범위: resource:read|write|* 또는 전체를 뜻하는 *. write는 read를 포함합니다. 인스턴스 제한: resource:action:{id|slug}.",
      '오류는 항상 {"error":{"code","message"}} 형식입니다. 401 auth_required, 403 scope_insufficient, 404 not_found, 429 too_many_requests(Retry-After 참고).',
      "재시도: POST에 Idempotency-Key 헤더를 보내면 같은 키와 본문의 재시도는 첫 응답을 그대로 돌려받습니다.",
      "비동기 작업은 202와 command_id를 돌려줍니다. 리소스의 state를 조회해 진행을 확인합니다.",
    ],
    quick: [
      '1. POST /v1/auth/signup {"email","password"} -> 토큰(op_u_...).',
      "2. Authorization: Bearer <토큰>으로 GET /v1/me.",
      '3. POST /v1/api-keys {"name","scopes":["databases:read"]} -> 자동화용 범위 제한 키.',
      "4. 전체 엔드포인트는 GET /v1/manual, 기계용 설명은 GET /v1/openapi.json.",
    ],
    endpoints: "엔드포인트",
    auth: "인증",
    errors: "오류 코드(HTTP 상태, 코드: 뜻, 뜻은 영어). 상태는 코드가 정합니다. 메시지가 아니라 코드로 분기하세요",
  },
} as const;

/** Plain-text manual built from the live route table. */
export function renderManual(
  routes: RouteEntry[],
  ctx: ManualContext,
  opts: { brief: boolean; lang: "en" | "ko" },
): string {
  const t = TEXT[opts.lang];
  const lines: string[] = [t.title, `edition: ${ctx.edition}, base domain: ${ctx.baseDomain}`, ""];
  lines.push(...t.quick, "");
  if (opts.brief) return lines.join("\n") + "\n";
  lines.push(...t.intro, "", `${t.endpoints}:`);
  const byTag = new Map<string, RouteEntry[]>();
  for (const r of routes) {
    if (r.url.startsWith("/v1/operator") || r.url === "/v1/fleet/patch-report") continue;
    byTag.set(r.tag, [...(byTag.get(r.tag) ?? []), r]);
  }
  for (const [tag, entries] of [...byTag].sort(([a], [b]) => a.localeCompare(b))) {
    lines.push("", `## ${tag}`);
    for (const r of entries.sort((a, b) => a.url.localeCompare(b.url) || a.method.localeCompare(b.method))) {
      const summary = opts.lang === "ko" && r.summaryKo ? r.summaryKo : r.summary;
      lines.push(`${r.method} ${r.url.replace(/:(\w+)/g, "{$1}")} - ${summary} [${t.auth}: ${describeAuth(r.auth)}]`);
    }
  }
  lines.push("", `## ${t.errors}:`);
  for (const [code, [status, meaning]] of Object.entries(ERROR_CATALOG) as [ErrorCode, readonly [number, string]][]) {
    lines.push(`${status} ${code}: ${meaning}`);
  }
  return lines.join("\n") + "\n";
}
