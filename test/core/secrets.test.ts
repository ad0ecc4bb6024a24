import { describe, it, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, rm, stat } from "node:fs/promises";
import { randomBytes } from "node:crypto";
import os from "node:os";
import path from "node:path";
import { SecretBox, loadSecretBox, registerSecretKey } from "../../src/kernel/secrets.js";
import { createPool } from "../../src/store/db.js";
import { freshDatabase } from "../helpers/app.js";

describe("secrets at rest", () => {
  const dirs: string[] = [];
  after(async () => {
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  });

  it("seals with AES-GCM bound to the column; another column or a changed byte does not open", () => {
    const box = new SecretBox(randomBytes(32));
    const sealed = box.seal("s3cret-password", "databases.initial_password");
    assert.match(sealed, /^enc:v1:[0-9a-f]{12}:/);
    assert.ok(!sealed.includes("s3cret"));
    assert.equal(box.open(sealed, "databases.initial_password"), "s3cret-password");
    assert.throws(() => box.open(sealed, "billing_cards.provider_ref"));
    const tampered = sealed.slice(0, -2) + (sealed.endsWith("A") ? "B" : "A") + sealed.slice(-1);
    assert.throws(() => box.open(tampered, "databases.initial_password"));
    assert.equal(box.open("legacy plaintext", "x"), "legacy plaintext");
  });

  it("rotation: a retired key still opens old values, which need re-sealing under the new key", () => {
    const oldKey = randomBytes(32);
    const before = new SecretBox(oldKey).seal("v", "c");
    const rotated = new SecretBox(randomBytes(32), [oldKey]);
    assert.equal(rotated.open(before, "c"), "v");
    assert.equal(rotated.needsReseal(before), true);
    assert.equal(rotated.needsReseal(rotated.seal("v", "c")), false);
    assert.equal(rotated.needsReseal("plain"), true);
    assert.throws(() => new SecretBox(randomBytes(32)).open(before, "c"), /unknown key/);
  });

  it("without PLATFORM_SECRET_KEY the key is generated once into DATA_DIR with mode 0600", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "platform-key-"));
    dirs.push(dir);
    const first = await loadSecretBox({}, dir);
    assert.equal(first.file, path.join(dir, "platform-key"));
    assert.equal((await stat(first.file!)).mode & 0o777, 0o600);
    const again = await loadSecretBox({}, dir);
    assert.equal(again.box.currentKeyId, first.box.currentKeyId);
    await assert.rejects(
      loadSecretBox({ PLATFORM_SECRET_KEY: "too-short" }, dir),
      /PLATFORM_SECRET_KEY must be 32 bytes/,
    );
  });

  it("a second host with a key the store has never seen is refused at start-up", async () => {
    const database = await freshDatabase();
    const db = createPool(database.url, 2);
    try {
      const key = randomBytes(32);
      await registerSecretKey(db, new SecretBox(key));
      await registerSecretKey(db, new SecretBox(key)); // the same key again: fine
      await assert.rejects(registerSecretKey(db, new SecretBox(randomBytes(32))), /give every host the same key/);
      await registerSecretKey(db, new SecretBox(randomBytes(32), [key])); // rotated, old key retired: accepted
    } finally {
      await db.end();
      await database.drop();
    }
  });
});
