import { test } from "node:test";
import assert from "node:assert/strict";
import { gunzipSync } from "node:zlib";
import * as tar from "tar";
import { gzipBlob, paxRecord, splitPath, tarBlob } from "../../packages/console/src/tar.js";

/** Every entry of an archive as node-tar's strict parser reads it: path, type, mode and content. */
async function read(bytes: Buffer): Promise<{ path: string; type: string; mode: number; body: string }[]> {
  const out: { path: string; type: string; mode: number; body: string }[] = [];
  const parser = new tar.Parser({
    strict: true,
    onReadEntry: (entry) => {
      const chunks: Buffer[] = [];
      entry.on("data", (c: Buffer) => chunks.push(c));
      entry.on("end", () =>
        out.push({ path: entry.path, type: entry.type, mode: entry.mode ?? 0, body: Buffer.concat(chunks).toString() }),
      );
    },
  });
  await new Promise<void>((resolve, reject) => {
    parser.on("error", reject);
    parser.on("end", () => resolve());
    parser.end(bytes);
  });
  return out;
}

/** The console's tar writer (packages/console/src/tar.ts) read back by node-tar, which the platform unpacks with. */
test("the console's tar writer: ustar names, the prefix field, PAX paths, UTF-8, gzip", async () => {
  const deep = `${"folder-".repeat(12)}x/${"sub-".repeat(10)}y/index.html`; // > 100 bytes, splits at a "/"
  const flat = `${"n".repeat(150)}.txt`; // one name longer than the name field: a PAX path
  const files = [
    { path: "index.html", body: "<h1>hi</h1>" },
    { path: "css/site.css", body: "h1{}" },
    { path: "한글/파일.txt", body: "안녕" },
    { path: deep, body: "deep" },
    { path: flat, body: "flat" },
    { path: "empty.txt", body: "" },
  ];
  assert.ok(splitPath(deep)!.prefix.length > 0);
  assert.equal(splitPath(flat), null);
  const blob = tarBlob(files.map((f) => ({ path: f.path, data: new Blob([f.body]), mtime: 1_700_000_000 })));
  const bytes = Buffer.from(await blob.arrayBuffer());
  assert.equal(bytes.length % 512, 0);
  assert.equal(bytes.subarray(257, 263).toString("latin1"), "ustar\0");
  const entries = await read(bytes);
  assert.deepEqual(
    entries.map((e) => [e.path, e.type, e.body]),
    files.map((f) => [f.path, "File", f.body]),
  );
  assert.ok(entries.every((e) => (e.mode & 0o777) === 0o644));

  const gz = Buffer.from(await (await gzipBlob(blob)).arrayBuffer());
  assert.equal(gz[0], 0x1f);
  assert.deepEqual(gunzipSync(gz), bytes);
  assert.throws(() => tarBlob([{ path: "a/../../etc/passwd", data: new Blob(["x"]) }]), /refused path/);
});

test("PAX records count their own length", () => {
  for (const value of ["a", "x".repeat(89), "x".repeat(90), "x".repeat(991), "x".repeat(992), "한".repeat(40)]) {
    const record = paxRecord("path", value);
    const length = Number(record.split(" ")[0]);
    assert.equal(Buffer.byteLength(record), length, `value of ${value.length} characters`);
  }
});
