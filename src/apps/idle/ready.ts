import { tcpAnswers } from "../../net/tcp.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A woken pod without declared checks is ready, as by the default readiness (a TCP connect), once its restarted
 * container's port accepts a connection: polled here every 5 ms without a podman call per try (the readiness
 * loop inspects the container twice per try), so the held requests go through as soon as it listens (a refused
 * local connect costs microseconds; at 20 ms a wake lost 10 ms on average). Bounded: false sends the reconcile
 * through the ordinary readiness loop.
 */
export async function answersSoon(address: string, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await tcpAnswers(address, Math.max(50, Math.min(500, deadline - Date.now())))) return true;
    await sleep(5);
  }
  return false;
}
