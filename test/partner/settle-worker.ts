/**
 * A settling process for the crash test (billing.test.ts): settles one window against DATABASE_URL and exits. The
 * test holds the partner wallet's row lock, so this process stops inside the window's transaction until killed.
 */
import { createPool } from "../../src/store/db.js";
import { settleWindow } from "../../src/partner/billing/settle.js";

const db = createPool(process.env.DATABASE_URL!, 1);
await settleWindow(db, new Date(process.env.WINDOW!));
await db.end();
