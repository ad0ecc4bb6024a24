import net from "node:net";

/** ports this process handed out lately: a port picked but not yet bound is free again to the kernel */
const handedOut: number[] = [];
const REMEMBERED = 256;

/**
 * A port free on that address now, for a listener this process starts next (nginx's admin port, EDGE_TLS_PORT
 * given as 0, the registry, an embedded PostgreSQL). Never one it handed out lately: two picks made before either
 * is bound can otherwise be the same port (a CI run's nginx got its admin port equal to its TLS port).
 */
export async function freePort(host = "127.0.0.1"): Promise<number> {
  for (let attempt = 0; ; attempt++) {
    const port = await new Promise<number>((resolve, reject) => {
      const server = net.createServer();
      server.unref();
      server.once("error", reject);
      server.listen(0, host, () => {
        const picked = (server.address() as net.AddressInfo).port;
        server.close(() => resolve(picked));
      });
    });
    if (handedOut.includes(port) && attempt < 20) continue;
    handedOut.push(port);
    if (handedOut.length > REMEMBERED) handedOut.shift();
    return port;
  }
}
