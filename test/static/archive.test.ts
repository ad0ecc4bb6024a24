/**
 * Uploads: tar, tar.gz and zip by their first bytes; every refused entry (path traversal, absolute paths, links,
 * devices) refuses the whole upload with 400 naming it and stores nothing; size and file-count limits answer 413
 * with the one error body; content types by extension; one wrapping folder dropped.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import zlib from "node:zlib";
import { call, expectError, signup } from "../helpers/app.js";
import { createSite, staticApp, tarArchive, tarEntry, upload, zipArchive, type StaticApp } from "./lib.js";

let s: StaticApp;
let token: string;

before(async () => {
  s = await staticApp({ env: { STATIC_MAX_ARCHIVE_MB: "1", STATIC_MAX_FILES: "5" } });
  token = (await signup(s.t.app)).token;
  await createSite(s.t, token, { name: "uploads", slug: "uploads" });
});
after(async () => s?.close());

async function fresh(): Promise<string> {
  const res = await call(s.t.app, { method: "POST", url: "/v1/static/uploads/deployments", token });
  assert.equal(res.statusCode, 201, res.body);
  return res.json().id;
}

const count = async (sql: string, params: unknown[] = []) => (await s.t.db.query(sql, params)).rows[0].n as number;

/** The upload is refused as a whole: no manifest row, no new content, the deployment still awaits its files. */
async function refusedWhole(id: string, blobsBefore: number) {
  assert.equal(await count("SELECT count(*)::int AS n FROM static_files WHERE deployment_id = $1", [id]), 0);
  assert.equal(await count("SELECT count(*)::int AS n FROM static_blobs"), blobsBefore);
  const d = await call(s.t.app, { url: `/v1/static/uploads/deployments/${id}`, token });
  assert.equal(d.json().status, "awaiting_upload");
}

test("refused entries: 400 bad_archive naming the entry, nothing stored", async () => {
  const good = tarEntry("index.html", "<h1>fine</h1>");
  const cases: [string, Buffer, string, RegExp][] = [
    ["tar ..", tarArchive([good, tarEntry("../evil.html", "x")]), "application/x-tar", /"\.\.\/evil\.html".*traversal/],
    [
      "tar inner ..",
      tarArchive([good, tarEntry("a/../../b.html", "x")]),
      "application/x-tar",
      /a\/\.\.\/\.\.\/b\.html/,
    ],
    [
      "tar absolute",
      tarArchive([good, tarEntry("/etc/passwd", "x")]),
      "application/x-tar",
      /"\/etc\/passwd".*absolute/,
    ],
    [
      "tar symlink",
      tarArchive([good, tarEntry("link", "", "2", "/etc/passwd")]),
      "application/x-tar",
      /"link".*symbolic/,
    ],
    [
      "tar hard link",
      tarArchive([good, tarEntry("hard", "", "1", "index.html")]),
      "application/x-tar",
      /"hard".*hard link/,
    ],
    ["tar device", tarArchive([good, tarEntry("dev", "", "3")]), "application/x-tar", /"dev".*device/],
    ["tar fifo", tarArchive([good, tarEntry("pipe", "", "6")]), "application/x-tar", /"pipe".*pipe/],
    ["tar.gz ..", zlib.gzipSync(tarArchive([good, tarEntry("ok/../../x", "x")])), "application/gzip", /traversal/],
    [
      "zip ..",
      zipArchive([
        { name: "index.html", body: "x" },
        { name: "../../evil.sh", body: "x" },
      ]),
      "application/zip",
      /"\.\.\/\.\.\/evil\.sh"/,
    ],
    ["zip absolute", zipArchive([{ name: "/abs.html", body: "x" }]), "application/zip", /absolute/],
    ["zip backslash", zipArchive([{ name: "..\\evil.html", body: "x" }]), "application/zip", /backslash/],
    [
      "zip symlink",
      zipArchive([
        { name: "index.html", body: "x" },
        { name: "link", body: "/etc/passwd", mode: 0o120777 },
      ]),
      "application/zip",
      /"link".*symbolic/,
    ],
    ["zip device", zipArchive([{ name: "dev", mode: 0o020644 }]), "application/zip", /device/],
  ];
  for (const [what, body, type, message] of cases) {
    const blobs = await count("SELECT count(*)::int AS n FROM static_blobs");
    const id = await fresh();
    const res = await upload(s.t, token, "uploads", id, body, type);
    expectError(res, 400, "bad_archive");
    assert.match(res.json().error.message, message, what);
    await refusedWhole(id, blobs);
  }
});

test("not an archive, empty, damaged, or JSON: 400 bad_archive / 415", async () => {
  const id = await fresh();
  const blobs = await count("SELECT count(*)::int AS n FROM static_blobs");
  expectError(
    await upload(s.t, token, "uploads", id, Buffer.from("hello world"), "application/zip"),
    400,
    "bad_archive",
  );
  expectError(await upload(s.t, token, "uploads", id, Buffer.alloc(0), "application/x-tar"), 400, "bad_archive");
  const tgz = zlib.gzipSync(tarArchive([tarEntry("index.html", "x".repeat(5000))]));
  expectError(await upload(s.t, token, "uploads", id, tgz.subarray(0, tgz.length - 20), "application/gzip"), 400);
  const broken = tarArchive([tarEntry("index.html", "x")]);
  broken[150] ^= 0xff; // checksum no longer matches
  expectError(await upload(s.t, token, "uploads", id, broken, "application/x-tar"), 400, "bad_archive");
  expectError(
    await upload(s.t, token, "uploads", id, tarArchive([tarEntry("dir/", "", "5")]), "application/x-tar"),
    400,
  );
  const json = await call(s.t.app, {
    method: "PUT",
    url: `/v1/static/uploads/deployments/${id}/files`,
    token,
    body: { files: [] },
  });
  expectError(json, 415, "unsupported_media_type");
  await refusedWhole(id, blobs);
});

test("limits: an archive over max_bytes, an unpacked total over it, more than max_files: 413", async () => {
  const id = await fresh();
  const blobs = await count("SELECT count(*)::int AS n FROM static_blobs");
  const big = tarArchive([tarEntry("big.bin", randomBytes(1024 * 1024 + 10))]);
  const res = await upload(s.t, token, "uploads", id, big, "application/x-tar");
  expectError(res, 413, "payload_too_large");
  assert.deepEqual(Object.keys(res.json()), ["error"]);
  // small compressed, large unpacked (a compression bomb)
  const bomb = zlib.gzipSync(tarArchive([tarEntry("zeros.bin", Buffer.alloc(3 * 1024 * 1024))]));
  assert.ok(bomb.length < 100_000);
  expectError(await upload(s.t, token, "uploads", id, bomb, "application/gzip"), 413, "payload_too_large");
  const zipBomb = zipArchive([{ name: "zeros.bin", body: Buffer.alloc(3 * 1024 * 1024) }]);
  expectError(await upload(s.t, token, "uploads", id, zipBomb, "application/zip"), 413, "payload_too_large");
  const many = tarArchive(Array.from({ length: 6 }, (_, i) => tarEntry(`f${i}.txt`, `${i}`)));
  const tooMany = await upload(s.t, token, "uploads", id, many, "application/x-tar");
  expectError(tooMany, 413, "payload_too_large");
  assert.match(tooMany.json().error.message, /more than 5 files/);
  await refusedWhole(id, blobs);
});

test("content types by extension (text in UTF-8), equal contents stored once, the format told by magic bytes", async () => {
  const id = await fresh();
  const files = [
    tarEntry("./", "", "5"),
    tarEntry("./index.html", "<h1>same</h1>"),
    tarEntry("./copy.html", "<h1>same</h1>"),
    tarEntry("./assets/app.js", "1"),
    tarEntry("./assets/site.css", "body{}"),
    tarEntry("./assets/logo.png", "png"),
    tarEntry("./data.json", "{}"),
  ];
  // a tar sent as octet-stream is still a tar
  const res = await upload(s.t, token, "uploads", id, tarArchive(files), "application/octet-stream");
  assert.equal(res.statusCode, 413, "six files is over STATIC_MAX_FILES=5"); // the folder entry does not count, files do
  const five = tarArchive(files.slice(0, 6));
  const ok = await upload(s.t, token, "uploads", id, five, "application/octet-stream");
  assert.equal(ok.statusCode, 200, ok.body);
  assert.equal(ok.json().file_count, 5);
  const rows = await s.t.db.query(
    "SELECT path, content_type, hash FROM static_files WHERE deployment_id = $1 ORDER BY path",
    [id],
  );
  assert.deepEqual(
    rows.rows.map((r) => [r.path, r.content_type]),
    [
      ["assets/app.js", "text/javascript; charset=utf-8"],
      ["assets/logo.png", "image/png"],
      ["assets/site.css", "text/css; charset=utf-8"],
      ["copy.html", "text/html; charset=utf-8"],
      ["index.html", "text/html; charset=utf-8"],
    ],
  );
  const copy = rows.rows.find((r) => r.path === "copy.html");
  const index = rows.rows.find((r) => r.path === "index.html");
  assert.equal(copy.hash, index.hash);
  assert.equal(await count("SELECT count(*)::int AS n FROM static_blobs WHERE hash = $1", [index.hash]), 1);
});

test("one wrapping folder is dropped only when it holds every file", async () => {
  const wrapped = await fresh();
  const zip = zipArchive([
    { name: "build/" },
    { name: "build/index.html", body: "a" },
    { name: "build/js/app.js", body: "b", store: true },
  ]);
  assert.equal((await upload(s.t, token, "uploads", wrapped, zip, "application/zip")).statusCode, 200);
  const paths = async (id: string) =>
    (await s.t.db.query("SELECT path FROM static_files WHERE deployment_id = $1 ORDER BY path", [id])).rows.map(
      (r) => r.path,
    );
  assert.deepEqual(await paths(wrapped), ["index.html", "js/app.js"]);
  const mixed = await fresh();
  const zip2 = zipArchive([
    { name: "top.html", body: "a" },
    { name: "build/index.html", body: "b" },
  ]);
  assert.equal((await upload(s.t, token, "uploads", mixed, zip2, "application/zip")).statusCode, 200);
  assert.deepEqual(await paths(mixed), ["build/index.html", "top.html"]);
});
