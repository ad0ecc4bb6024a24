import type { ServerResponse } from "node:http";
import type { FastifyBaseLogger } from "fastify";

export const ACME_CHALLENGE = "/.well-known/acme-challenge/";

/**
 * An ACME HTTP-01 check (RFC 8555 8.3): `GET /.well-known/acme-challenge/<token>` on any host is answered from
 * the store (the certificates area's table), so whichever edge process the CA reaches answers it, before routing
 * and access rules. Unknown tokens: 404.
 */
export function answerChallenge(
  url: string,
  res: ServerResponse,
  lookup: (token: string) => Promise<string | null>,
  log: FastifyBaseLogger,
): void {
  const token = url.slice(ACME_CHALLENGE.length).split("?")[0];
  const send = (status: number, body: string) => {
    res.writeHead(status, {
      "content-type": "text/plain; charset=utf-8",
      "content-length": Buffer.byteLength(body),
      "cache-control": "no-store",
    });
    res.end(body);
  };
  if (!/^[A-Za-z0-9_-]{1,256}$/.test(token)) return send(404, "not found\n");
  lookup(token).then(
    (answer) => (answer === null ? send(404, "not found\n") : send(200, answer)),
    (err) => {
      log.error({ err }, "ACME challenge lookup failed");
      send(503, "unavailable\n");
    },
  );
}
