/** The worker threads' digests equal the inline ones, for every algorithm, across batch boundaries. */
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { createHash, randomBytes } from "node:crypto";
import { CHECKSUM_ALGORITHMS, UploadDigests } from "../../src/buckets/gateway/checksums.js";
import { DigestPool } from "../../src/buckets/gateway/digest-pool.js";

describe("buckets: digests on worker threads", () => {
  const pool = new DigestPool(2);
  after(() => pool.close());

  test("MD5, SHA-256 and every checksum match the inline computation", async () => {
    const data = randomBytes(3 * 1024 * 1024 + 12345);
    const chunks = [data.subarray(0, 1000), data.subarray(1000, 2_500_000), data.subarray(2_500_000)];
    const results = await Promise.all(
      [pool, null].map(async (p) => {
        const d = new UploadDigests({ sha256: true, algorithms: CHECKSUM_ALGORITHMS, pool: p });
        for (const c of chunks) d.update(c);
        return d.result();
      }),
    );
    const [remote, inline] = results;
    assert.ok(remote.md5.equals(createHash("md5").update(data).digest()));
    assert.ok(remote.md5.equals(inline.md5));
    assert.equal(remote.sha256, createHash("sha256").update(data).digest("hex"));
    assert.deepEqual([...remote.checksums.keys()].sort(), [...CHECKSUM_ALGORITHMS].sort());
    for (const a of CHECKSUM_ALGORITHMS) assert.ok(remote.checksums.get(a)!.equals(inline.checksums.get(a)!), a);
  });

  test("uploads hashed at once on one pool keep apart", async () => {
    const bodies = Array.from({ length: 6 }, () => randomBytes(1024 * 1024 + 7));
    const digests = bodies.map(() => new UploadDigests({ sha256: false, algorithms: ["crc32c"], pool }));
    for (let offset = 0; offset < bodies[0].length; offset += 65536)
      bodies.forEach((b, i) => digests[i].update(b.subarray(offset, offset + 65536)));
    const results = await Promise.all(digests.map((d) => d.result()));
    results.forEach((r, i) => assert.ok(r.md5.equals(createHash("md5").update(bodies[i]).digest())));
  });
});
