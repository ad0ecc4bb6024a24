import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { testImage } from "../helpers/images.js";
import { isolateSubnet, NETWORK_POOL, unisolateSubnet } from "../../src/runtime/podman/isolation.js";
import { cleanup, PREFIX, runtime, spec, waitFor } from "./lib.js";

/**
 * Per-owner networks: isolated from each other (netavark isolate=true), idempotent, reporting subnet and
 * gateway; containers on one network reach each other, never a container on another.
 */
describe("podman runtime: isolated networks", () => {
  let v1: string;
  before(async () => {
    v1 = await testImage("TEST_IMAGE_HTTPD_V1");
  });
  after(cleanup);

  const fetchFrom = async (name: string, url: string) =>
    runtime.exec(name, ["timeout", "3", "wget", "-q", "-O", "-", url], { timeoutMs: 10_000, maxBytes: 1000 });

  test("ensureNetwork is idempotent and reports subnet and gateway", async () => {
    const a = await runtime.ensureNetwork(`${PREFIX}-owner-a`);
    assert.equal(a.name, `${PREFIX}-owner-a`);
    assert.match(a.subnet, /^\d+\.\d+\.\d+\.\d+\/\d+$/);
    assert.match(a.gateway, /^\d+\.\d+\.\d+\.\d+$/);
    assert.deepEqual(await runtime.ensureNetwork(`${PREFIX}-owner-a`), a);
    // concurrent calls agree
    const [x, y] = await Promise.all([
      runtime.ensureNetwork(`${PREFIX}-owner-c`),
      runtime.ensureNetwork(`${PREFIX}-owner-c`),
    ]);
    assert.deepEqual(x, y);
    await runtime.removeNetwork(`${PREFIX}-owner-c`);
    await runtime.removeNetwork(`${PREFIX}-owner-c`);
  });

  test("a container reaches its own network's containers, not another owner's, and not loopback-published ports", async () => {
    const a = await runtime.ensureNetwork(`${PREFIX}-owner-a`);
    const b = await runtime.ensureNetwork(`${PREFIX}-owner-b`);
    assert.notEqual(a.subnet, b.subnet);
    const server = await runtime.create(spec("srv-a", v1, { port: 8080, network: a.name }));
    const sameNet = await runtime.create(spec("cli-a", v1, { command: ["sleep", "120"], network: a.name }));
    const otherNet = await runtime.create(spec("cli-b", v1, { command: ["sleep", "120"], network: b.name }));
    await waitFor("server healthy", () => runtime.health(server.name));

    const same = await fetchFrom(sameNet.name, `http://${server.networkAddress}:8080/`);
    assert.equal(same.stdout, "v1\n", JSON.stringify(same));
    // by name too: the network's DNS
    const byName = await fetchFrom(sameNet.name, `http://${server.name}:8080/`);
    assert.equal(byName.stdout, "v1\n", JSON.stringify(byName));

    const cross = await fetchFrom(otherNet.name, `http://${server.networkAddress}:8080/`);
    assert.notEqual(cross.exitCode, 0, "another owner's network cannot reach it");
    assert.equal(cross.stdout, "");
    // the published port is on the host's loopback only: not reachable through the gateway
    const port = server.address!.split(":")[1];
    const viaGateway = await fetchFrom(otherNet.name, `http://${b.gateway}:${port}/`);
    assert.notEqual(viaGateway.exitCode, 0);
    // while the host reaches it on 127.0.0.1
    assert.equal(await (await fetch(`http://${server.address}/`)).text(), "v1\n");

    // a network in use is not removed from under its containers
    await assert.rejects(runtime.removeNetwork(a.name));
  });

  test("a subnet whose DROP stands above its own RETURN is repaired (it would cut the network off its gateway)", async () => {
    const subnet = "10.89.254.0/24"; // outside what these tests' networks get
    const chain = () => execFileSync("iptables", ["-w", "-t", "raw", "-S", "PLATFORM_ISOLATION"], { encoding: "utf8" });
    const rule = (target: string) =>
      `-s ${subnet} -d ${target === "RETURN" ? subnet : NETWORK_POOL} -j ${target}`.split(" ");
    try {
      await isolateSubnet("10.89.253.0/24"); // the chain exists
      execFileSync("iptables", ["-w", "-t", "raw", "-I", "PLATFORM_ISOLATION", "1", ...rule("DROP")]);
      execFileSync("iptables", ["-w", "-t", "raw", "-A", "PLATFORM_ISOLATION", ...rule("RETURN")]);
      await isolateSubnet(subnet);
      const lines = chain().split("\n");
      const at = (target: string) => lines.indexOf(`-A PLATFORM_ISOLATION ${rule(target).join(" ")}`);
      assert.ok(at("RETURN") >= 0 && at("DROP") > at("RETURN"), chain());
      assert.equal(lines.filter((l) => l.includes(`-s ${subnet} -d ${NETWORK_POOL}`)).length, 1);
    } finally {
      await unisolateSubnet(subnet);
      await unisolateSubnet("10.89.253.0/24");
    }
  });
});
