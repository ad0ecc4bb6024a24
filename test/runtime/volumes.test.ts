import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import path from "node:path";
import { testImage } from "../helpers/images.js";
import { createVolumeStore, RuntimeError } from "../../src/runtime/index.js";
import { cleanup, PREFIX, runtime, spec } from "./lib.js";

const mounted = (dir: string) => readFileSync("/proc/self/mountinfo", "utf8").includes(` ${dir} `);

/**
 * Local volumes: a loop-mounted ext4 image per volume. A full volume refuses writes (ENOSPC) instead of
 * growing; data survives the container's re-creation and a remount (as after a host reboot).
 */
describe("local volumes", () => {
  let dataDir: string;
  let v1: string;
  const volumes = () => createVolumeStore(dataDir);
  const id = `${PREFIX}-vol`;

  before(async () => {
    dataDir = await mkdtemp(path.resolve(".test-data/rtt-volumes-"));
    v1 = await testImage("TEST_IMAGE_HTTPD_V1");
    assert.equal(await volumes().unavailable(), null);
  });
  after(async () => {
    await cleanup();
    await volumes().remove(id);
    await rm(dataDir, { recursive: true, force: true });
  });

  const run = async (name: string, script: string, dir: string) => {
    const c = await runtime.create(
      spec(name, v1, { command: ["sleep", "120"], mounts: [{ source: dir, target: "/data" }] }),
    );
    return runtime.exec(c.name, ["sh", "-c", script], { timeoutMs: 30_000, maxBytes: 4096 });
  };

  test("a full volume refuses writes; its data survives re-creating the container and a remount", async () => {
    const store = volumes();
    const { path: dir } = await store.create(id, 16);
    assert.equal(dir, path.join(dataDir, "volumes", id));
    assert.ok(mounted(dir));
    assert.deepEqual(await store.create(id, 16), { path: dir }, "creating again finds it");
    const image = `${dir}.img`;
    // sparse: the 16 MB image takes far less of the host's disk
    const allocated = Number(execFileSync("stat", ["-c", "%b*%B", image], { encoding: "utf8" }).split("*")[0]) * 512;
    assert.ok(allocated < 8 * 1024 * 1024, `allocated ${allocated}`);

    const write = await run("writer", "echo kept > /data/keep && dd if=/dev/zero of=/data/fill bs=1M count=64", dir);
    assert.notEqual(write.exitCode, 0, "dd fails when the volume is full");
    assert.match(write.stderr, /No space left on device/);
    const usage = await store.usage(id);
    assert.ok(
      usage && usage.sizeBytes <= 16 * 1024 * 1024 && usage.usedBytes > 12 * 1024 * 1024,
      JSON.stringify(usage),
    );
    // the host file did not grow past the volume's size
    assert.ok(execFileSync("stat", ["-c", "%s", image], { encoding: "utf8" }).trim() === String(16 * 1024 * 1024));

    // a new container over the same volume sees the data
    await runtime.remove(`${PREFIX}-writer`);
    const read = await run("reader", "cat /data/keep; rm /data/fill; echo more > /data/more && echo wrote", dir);
    assert.equal(read.stdout, "kept\nwrote\n");
    await runtime.remove(`${PREFIX}-reader`);

    // as after a reboot: not mounted any more, the directory is empty, ensureMounted brings it back
    execFileSync("umount", [dir]);
    assert.ok(!mounted(dir));
    assert.equal(existsSync(path.join(dir, "keep")), false);
    assert.deepEqual(await volumes().ensureMounted(id), { path: dir });
    assert.ok(mounted(dir));
    assert.equal(readFileSync(path.join(dir, "more"), "utf8"), "more\n");
    await volumes().ensureMounted(id);
  });

  test("remove unmounts and deletes; removing again and unknown volumes are fine; bad input is refused", async () => {
    const store = volumes();
    const dir = store.path(id);
    await store.remove(id);
    assert.ok(!mounted(dir));
    assert.equal(existsSync(dir), false);
    assert.equal(existsSync(`${dir}.img`), false);
    await store.remove(id);
    assert.equal(await store.usage(id), null);
    await assert.rejects(store.ensureMounted(id), RuntimeError);
    await assert.rejects(store.create("../escape", 16), /not valid/);
    await assert.rejects(store.create(`${PREFIX}-tiny`, 1), /at least 8/);
  });
});
