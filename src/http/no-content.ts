import type { FastifyReply } from "fastify";

/**
 * The answer of a route that answers 204 with no body once its action is done (a delete, a revoke, a sign-out):
 * `handler: async (request, reply) => noContentAfter(reply, svc.remove(...))`.
 */
export async function noContentAfter(reply: FastifyReply, action: Promise<unknown>): Promise<FastifyReply> {
  await action;
  return reply.code(204).send(null);
}
