import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import type { AddressInfo } from "node:net";
import { call, createTestApp, signup, type TestApp } from "../helpers/app.js";
import { recordEvent } from "../../src/events/public.js";
import { accountOwner } from "../../src/kernel/owner.js";
import { inTransaction } from "../../src/store/db.js";

interface SseEvent {
  id: string;
  event: string;
  data: any;
}

/** A Server-Sent Events client over fetch: parses `id`, `event`, `data` blocks as they arrive. */
async function openStream(base: string, token: string, headers: Record<string, string> = {}, query = "") {
  const ctl = new AbortController();
  const res = await fetch(`${base}/v1/events/stream${query}`, {
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers },
    signal: ctl.signal,
  });
  assert.equal(res.status, 200);
  assert.match(res.headers.get("content-type") ?? "", /text\/event-stream/);
  const events: SseEvent[] = [];
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buf = "";
  const done = (async () => {
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        buf += decoder.decode(value, { stream: true });
        let i: number;
        while ((i = buf.indexOf("\n\n")) >= 0) {
          const block = buf.slice(0, i);
          buf = buf.slice(i + 2);
          const f: Record<string, string> = {};
          for (const line of block.split("\n")) {
            const m = /^([a-z]+): ?(.*)$/.exec(line);
            if (m) f[m[1]] = m[2];
          }
          if (f.data) events.push({ id: f.id, event: f.event, data: JSON.parse(f.data) });
        }
      }
    } catch {
      /* aborted */
    }
  })();
  return {
    events,
    async until(n: number, ms = 10_000) {
      const deadline = Date.now() + ms;
      while (events.length < n) {
        if (Date.now() > deadline) throw new Error(`stream: ${events.length} of ${n} events`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    close: async () => {
      ctl.abort();
      await done;
    },
  };
}

/** GET /v1/events/stream: live events, resume after Last-Event-ID with nothing lost, only the caller's owner. */
describe("event stream", () => {
  let t: TestApp;
  let t2: TestApp;
  let base: string;
  let base2: string;
  let a: { token: string; id: string };
  let b: { token: string; id: string };
  before(async () => {
    t = await createTestApp();
    // a second API process over the same store: streams there see the same events in the same order
    t2 = await createTestApp({ databaseUrl: t.url });
    await t.app.listen({ port: 0, host: "127.0.0.1" });
    await t2.app.listen({ port: 0, host: "127.0.0.1" });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    base2 = `http://127.0.0.1:${(t2.app.server.address() as AddressInfo).port}`;
    a = await signup(t.app);
    b = await signup(t.app);
  });
  after(async () => {
    await t2?.close();
    await t?.close();
  });

  const emit = (owner: string, n: number, delayMs = 0) =>
    inTransaction(t.db, async (tx) => {
      const id = await recordEvent(tx, {
        type: "database.running",
        owner: accountOwner(owner),
        resource: { kind: "database", id: `db-${n}` },
        data: { n },
      });
      if (delayMs) await new Promise((r) => setTimeout(r, delayMs));
      return id;
    });

  test("live, then resumed from Last-Event-ID with nothing lost across concurrent commits and two processes", async () => {
    const s1 = await openStream(base, a.token);
    const other = await openStream(base, b.token);
    await emit(a.id, 1);
    await emit(b.id, 1000);
    await emit(a.id, 2);
    await s1.until(2);
    assert.deepEqual(
      s1.events.map((e) => e.data.data.n),
      [1, 2],
    );
    assert.equal(s1.events[0].event, "database.running");
    await other.until(1);
    assert.deepEqual(
      other.events.map((e) => e.data.data.n),
      [1000],
    );
    await other.close();
    const lastSeen = s1.events[1].id;
    await s1.close();

    // while disconnected: 60 events from overlapping transactions, some held open while later ones commit
    const live2 = await openStream(base2, a.token, { "last-event-id": lastSeen });
    await Promise.all(Array.from({ length: 60 }, (_, i) => emit(a.id, 100 + i, i % 7 === 0 ? 150 : 0)));
    const resumed = await openStream(base, a.token, { "last-event-id": lastSeen });
    const viaQuery = await openStream(base2, a.token, {}, `?last_event_id=${lastSeen}&type=database.*`);
    await emit(a.id, 999);
    for (const s of [resumed, live2, viaQuery]) {
      await s.until(61);
      const ns = s.events.map((e) => e.data.data.n);
      assert.equal(new Set(ns).size, 61, "no duplicates");
      assert.deepEqual(
        [...ns].sort((x, y) => x - y),
        [...Array.from({ length: 60 }, (_, i) => 100 + i), 999],
      );
      assert.equal(ns[60], 999, "the live one comes after the replay");
    }
    // both processes give one order
    assert.deepEqual(
      resumed.events.map((e) => e.id),
      live2.events.map((e) => e.id),
    );
    for (const s of [resumed, live2, viaQuery]) await s.close();
  });

  test("an unknown Last-Event-ID or another owner's is refused before the stream opens", async () => {
    const other = await emit(b.id, 5);
    for (const id of [other, "not-an-id"]) {
      const res = await fetch(`${base}/v1/events/stream`, {
        headers: { authorization: `Bearer ${a.token}`, "last-event-id": id },
      });
      assert.equal(res.status, 400);
      assert.equal((await res.json()).error.code, "bad_cursor");
    }
    const anon = await fetch(`${base}/v1/events/stream`);
    assert.equal(anon.status, 401);
  });

  test("the console's EventSource: its session cookie alone opens the stream (a GET needs no CSRF header)", async () => {
    const csrf = "csrf-token-for-stream-test-0123456789";
    const user = await signup(t.app);
    const signin = await call(t.app, {
      method: "POST",
      url: "/console/session",
      body: { email: user.email, password: "correct horse battery" },
      headers: { cookie: `platform_csrf=${csrf}`, "x-platform-csrf": csrf },
    });
    assert.equal(signin.statusCode, 204, signin.body);
    const raw = signin.headers["set-cookie"];
    const session = (Array.isArray(raw) ? raw : [String(raw)]).find((c) => c.startsWith("platform_session="))!;
    const s = await openStream(base, "", { cookie: session.split(";")[0] }, "?type=database.running");
    await emit(user.id, 7);
    await s.until(1);
    assert.equal(s.events[0].data.data.n, 7);
    await s.close();
  });
});
