import type { Principal } from "../../auth/principal.js";
import { auditedTransaction } from "../../audit/record.js";
import { ApiError, found, notFound } from "../../http/errors.js";
import type { JobQueue } from "../../jobs/queue.js";
import type { OrgMembership } from "../public.js";
import type { SecretBox } from "../../kernel/secrets.js";
import { isUuid, type Db } from "../../store/db.js";
import { OutboundError, type Outbound } from "../../net/outbound.js";
import { GitLabClient, GitLabError, normalizeBaseUrl } from "./client.js";
import { queueSync } from "./jobs.js";
import * as repo from "./repo.js";

export interface GitlabDeps {
  db: Db;
  secrets: SecretBox;
  jobs: Pick<JobQueue, "send">;
  timeoutMs: number;
  outbound: Outbound;
}

export interface SettingsInput {
  base_url: string;
  group_path: string;
  token?: string;
  archive_enabled?: boolean;
  gitops_enabled?: boolean;
  gitops_repo?: string | null;
  gitops_namespace?: string | null;
  gitops_host_pattern?: string | null;
  gitops_auto_sync?: boolean;
}

export interface TestInput {
  base_url?: string;
  group_path?: string;
  token?: string;
}

export type GitlabService = ReturnType<typeof gitlabService>;

const invalid = (message: string) => new ApiError("invalid_request", message);

/** A base_url that is not a usable URL, or names an address the platform does not call, is the request's fault. */
function refusal(err: unknown): ApiError | null {
  if (!(err instanceof GitLabError) || !err.code) return null;
  return new ApiError(err.code === "destination_forbidden" ? "destination_forbidden" : "invalid_request", err.message);
}

/** Whether two base URLs are the same scheme, host and port (the stored token may go there). */
function sameHost(a: string, b: string): boolean {
  try {
    return new URL(a).origin === new URL(b).origin;
  } catch {
    return false;
  }
}

/** What a settings change means for the apps already synced (README: a changed target syncs every app again). */
function changes(cur: repo.Settings, next: repo.Settings) {
  const differs = (keys: (keyof repo.Settings)[]) => keys.some((k) => cur[k] !== next[k]);
  return {
    // another file (or GitLab): what the platform wrote or applied there is unknown
    manifestMoved:
      differs(["base_url", "gitops_repo", "gitops_namespace"]) ||
      (differs(["group_path"]) && !next.gitops_repo?.includes("/")),
    retarget: differs([
      "base_url",
      "group_path",
      "archive_enabled",
      "gitops_enabled",
      "gitops_repo",
      "gitops_namespace",
      "gitops_host_pattern",
    ]),
  };
}

/** GET/PUT/DELETE /v1/org/integrations/gitlab, its /test, and the sync history (README, "GitLab integration and syncs"). */
export function gitlabService(d: GitlabDeps) {
  const open = (s: repo.SettingsRow) => d.secrets.open(s.token_sealed, repo.TOKEN_COLUMN);

  async function get(m: OrgMembership) {
    const s = await repo.settings(d.db, m.orgId);
    return { settings: s, token: s && open(s) };
  }

  async function put(p: Principal, m: OrgMembership, input: SettingsInput) {
    let baseUrl: string;
    try {
      baseUrl = normalizeBaseUrl(input.base_url);
      await d.outbound.check(baseUrl);
    } catch (err) {
      if (err instanceof OutboundError) throw new ApiError("destination_forbidden", `base_url: ${err.message}`);
      throw refusal(err) ?? err;
    }
    const gitops = input.gitops_enabled ?? false;
    if (gitops) {
      for (const f of ["gitops_repo", "gitops_namespace", "gitops_host_pattern"] as const)
        if (!input[f]) throw invalid(`${f} is required when gitops_enabled is true.`);
    }
    return auditedTransaction(d.db, p, async (tx) => {
      await repo.lockOrg(tx, m.orgId);
      const cur = await repo.settings(tx, m.orgId);
      if (cur && !input.token && !sameHost(cur.base_url, baseUrl))
        throw invalid("token is required when base_url names another host: the stored token is never sent elsewhere.");
      const token = input.token ?? (cur && open(cur));
      if (!token) throw invalid("token is required: the organization has no GitLab token stored yet.");
      const next: repo.Settings = {
        org_id: m.orgId,
        base_url: baseUrl,
        group_path: input.group_path.replace(/^\/+|\/+$/g, ""),
        token_sealed: d.secrets.seal(token, repo.TOKEN_COLUMN),
        archive_enabled: input.archive_enabled ?? false,
        gitops_enabled: gitops,
        gitops_repo: input.gitops_repo ?? null,
        gitops_namespace: input.gitops_namespace ?? null,
        gitops_host_pattern: input.gitops_host_pattern ?? null,
        gitops_auto_sync: input.gitops_auto_sync ?? false,
      };
      const { created } = await repo.upsertSettings(tx, next);
      if (cur) await repo.resyncAfterChange(tx, m.orgId, changes(cur, next));
      return { settings: (await repo.settings(tx, m.orgId))!, token, created };
    });
  }

  async function remove(p: Principal, m: OrgMembership) {
    const deleted = await auditedTransaction(d.db, p, (tx) => repo.deleteSettings(tx, m.orgId));
    return { deleted };
  }

  /**
   * Never throws for GitLab's sake: every failure of the server is ok:false with a sentence. A base_url that is no
   * http(s) URL is 400 invalid_request, one naming an address the platform does not call 400 destination_forbidden.
   */
  async function test(m: OrgMembership, body: TestInput | undefined) {
    const result = {
      ok: false,
      gitlab_version: null as string | null,
      group_name: null as string | null,
      group_web_url: null as string | null,
      error: null as string | null,
    };
    if (body?.base_url)
      try {
        normalizeBaseUrl(body.base_url);
      } catch (err) {
        throw refusal(err) ?? err;
      }
    const s = await repo.settings(d.db, m.orgId);
    const baseUrl = body?.base_url ?? s?.base_url;
    const groupPath = body?.group_path ?? s?.group_path;
    if (body?.base_url && !body.token && s && !sameHost(s.base_url, body.base_url))
      return {
        ...result,
        error: "Pass token with a base_url of another host: the stored token is never sent elsewhere.",
      };
    const token = body?.token ?? (s && open(s));
    const missing = !baseUrl ? "base_url" : !groupPath ? "group_path" : !token ? "token" : null;
    if (missing)
      return { ...result, error: `No ${missing}: save the integration first or pass ${missing} in the body.` };
    let gl: GitLabClient;
    try {
      gl = new GitLabClient({ baseUrl: baseUrl!, token: token!, timeoutMs: d.timeoutMs, outbound: d.outbound });
    } catch (err) {
      throw refusal(err) ?? err;
    }
    try {
      result.gitlab_version = (await gl.version()).version ?? null;
      const group = await gl.group(groupPath!.replace(/^\/+|\/+$/g, ""));
      if (!group) return { ...result, error: `The group ${groupPath} was not found, or the token cannot see it.` };
      return { ...result, ok: true, group_name: group.name, group_web_url: group.web_url };
    } catch (err) {
      const refused = refusal(err);
      if (refused) throw refused;
      if (err instanceof GitLabError) return { ...result, error: err.message };
      throw err;
    }
  }

  async function list(m: OrgMembership, limit: number) {
    return repo.listSyncs(d.db, m.orgId, limit);
  }

  /** A failed sync queued again (202); another status is 409. */
  async function retry(p: Principal, m: OrgMembership, id: string) {
    if (!isUuid(id)) throw notFound("sync");
    const row = await auditedTransaction(d.db, p, async (tx) => {
      const cur = found(await repo.findSync(tx, m.orgId, id), "sync");
      const again = await repo.requeue(tx, m.orgId, id);
      if (!again) throw new ApiError("conflict", `Sync ${id} is ${cur.status}; only failed syncs are queued again.`);
      return again;
    });
    await queueSync(d.jobs, row.id);
    return row;
  }

  return { get, put, remove, test, list, retry };
}
