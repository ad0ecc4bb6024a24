import net from "node:net";

/** Whether host:port accepts a TCP connection within the time (a pod's readiness, the runtime's liveness). */
export function tcpAnswers(address: string, timeoutMs: number): Promise<boolean> {
  const i = address.lastIndexOf(":");
  const host = address.slice(0, i);
  const port = Number(address.slice(i + 1));
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once("connect", () => done(true));
    socket.once("error", () => done(false));
  });
}
