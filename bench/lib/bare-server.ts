/**
 * The reference point of the benchmark: a minimal Fastify with one GET route and default options
 * (no logger), in its own process so it does not share an event loop with autocannon. Listens on a
 * free loopback port and tells the parent which one over IPC.
 */
import Fastify from "fastify";

const app = Fastify();
app.get("/", async () => ({ hello: "world" }));

await app.listen({ port: 0, host: "127.0.0.1" });
const address = app.server.address();
if (!address || typeof address === "string") throw new Error("bare server: no TCP address");
process.send?.({ port: address.port });

const stop = () => void app.close().then(() => process.exit(0));
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
// the parent went away without telling us: do not linger
process.on("disconnect", stop);
