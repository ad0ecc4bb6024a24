/**
 * A reporting process for the crash test (billing-crash.test.ts): runs the usage report job against DATABASE_URL and
 * the fake suite, and kills itself with SIGKILL right after the step KILL_AT (write | send | mark) commits, the
 * first time; without KILL_AT it finishes.
 */
import { createPool } from "../../src/store/db.js";
import { reportUsage } from "../../src/suite/billing/reports.js";
import { meteringBilling } from "../../src/suite/adapter/billing.js";
import { suiteApiClient } from "../../src/suite/adapter/api-client.js";

const db = createPool(process.env.DATABASE_URL!, 2);
const killAt = process.env.KILL_AT;
const die = (step: string) => () => {
  if (step === killAt) process.kill(process.pid, "SIGKILL");
};
const api = suiteApiClient({ baseUrl: process.env.SUITE_URL!, token: process.env.SUITE_TOKEN!, rps: 1000 });
await reportUsage({
  db,
  billing: meteringBilling(api, "hosting"),
  category: "hosting",
  hooks: { afterWrite: die("write"), afterSend: die("send"), afterMark: die("mark") },
});
await db.end();
