/**
 * On-premises licensing fixtures: the real app over a real database with Toss Payments replaced by the local fake of
 * the billing tests (test/fakes/toss.ts, its documented confirm API), and helpers that walk a caller through access
 * approval (operator routes) and terms acceptance, through HTTP.
 */
import assert from "node:assert/strict";
import { call, createTestApp, OPERATOR_TOKEN, signup, type TestApp } from "../helpers/app.js";
import { startFakeToss, type FakeToss } from "../fakes/toss.js";

export const TERMS_VERSION = "2026-11-01";

export interface OnpremApp {
  t: TestApp;
  toss: FakeToss;
  close(): Promise<void>;
}

export async function startOnpremApp(env: Record<string, string> = {}): Promise<OnpremApp> {
  const toss = await startFakeToss();
  const t = await createTestApp({
    env: {
      TOSS_API_BASE: toss.url,
      TOSS_SECRET_KEY: toss.secretKey,
      TOSS_CLIENT_KEY: "test_ck_onprem_0123456789",
      ONPREM_TERMS_VERSION: TERMS_VERSION,
      ONPREM_TERMS_URL: "https://example.com/onprem/terms",
      ONPREM_PRICE_PER_HOST_MONTH_KRW: "100000",
      ...env,
    },
  });
  return {
    t,
    toss,
    async close() {
      await t.close();
      await toss.close();
    },
  };
}

export type Scope = "me" | "org";

/** POST /v1/onprem/access/request, then the operator approves it; returns the inquiry id. */
export async function approve(t: TestApp, token: string, scope: Scope = "me", note?: string): Promise<string> {
  const req = await call(t.app, {
    method: "POST",
    url: "/v1/onprem/access/request",
    token,
    body: { scope, company: "Acme Corp", contact: "it@acme.example", message: "We want to run it ourselves." },
  });
  assert.equal(req.statusCode, 201, req.body);
  const ok = await call(t.app, {
    method: "POST",
    url: `/v1/operator/onprem/access-requests/${req.json().id}/approve`,
    token: OPERATOR_TOKEN,
    body: note === undefined ? {} : { note },
  });
  assert.equal(ok.statusCode, 200, ok.body);
  return req.json().id;
}

export async function acceptTerms(t: TestApp, token: string, version = TERMS_VERSION): Promise<void> {
  const res = await call(t.app, { method: "POST", url: "/v1/onprem/terms/accept", token, body: { version } });
  assert.equal(res.statusCode, 200, res.body);
}

/** A new account, approved and with the terms accepted: ready to download, try and buy. */
export async function readyAccount(t: TestApp) {
  const u = await signup(t.app);
  await approve(t, u.token);
  await acceptTerms(t, u.token);
  return u;
}

export const post = (t: TestApp, url: string, token: string | undefined, body: unknown = {}) =>
  call(t.app, { method: "POST", url, token, body });
export const get = (t: TestApp, url: string, token?: string) => call(t.app, { url, token });
