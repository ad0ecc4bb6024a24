import assert from "node:assert/strict";
import { call, type TestApp } from "../helpers/app.js";

export const PASSWORD = "correct horse battery"; // what the signup helper uses

/** Calls the account tests share; `app` is read at call time, since test apps are built in before(). */
export function accountCalls(app: () => TestApp) {
  const login = (email: string, password: string) =>
    call(app().app, { method: "POST", url: "/v1/auth/login", body: { email, password } });
  const me = (token: string) => call(app().app, { url: "/v1/me", token });
  const tokenId = async (token: string): Promise<string> => {
    const res = await call(app().app, { url: "/v1/token", token });
    assert.equal(res.statusCode, 200, res.body);
    return res.json().id;
  };
  /** The caller's audit log; rows commit with their change, so they are there when the answer arrives. */
  const audit = async (token: string, query = "limit=200") => {
    const res = await call(app().app, { url: `/v1/me/audit?${query}`, token });
    assert.equal(res.statusCode, 200, res.body);
    return res.json() as { items: any[]; next_cursor: string | null };
  };
  return { login, me, tokenId, audit };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
