/**
 * bench:buckets' second reference: a bare node:http server storing and serving the same objects as files, with
 * no authentication, no store and no metadata (`tsx bench/lib/bare-object-server.ts <dir> <port>`). A PUT is
 * written to a temporary file, fsynced and renamed into place, as durable as the gateway's; a GET reads the file
 * (small ones in one read, large ones streamed). Set beside the gateway it shows what the gateway itself costs,
 * apart from what any HTTP server in node costs on this machine (the plain-files reference has no HTTP at all).
 */
import { createReadStream, createWriteStream } from "node:fs";
import { mkdir, open, readFile, rename, stat } from "node:fs/promises";
import http from "node:http";
import path from "node:path";
import { pipeline } from "node:stream/promises";

const [dir, port] = [process.argv[2], Number(process.argv[3])];
let tmpCounter = 0;
const fileOf = (url: string) => path.join(dir, encodeURIComponent(decodeURIComponent(url.split("?")[0])));

async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  const file = fileOf(req.url ?? "/");
  if (req.method === "PUT") {
    const tmp = path.join(dir, `.tmp-${process.pid}-${tmpCounter++}`);
    await pipeline(req, createWriteStream(tmp));
    const fh = await open(tmp, "r+");
    await fh.sync();
    await fh.close();
    await rename(tmp, file);
    res.writeHead(200, { "content-length": 0 });
    res.end();
    return;
  }
  const { size } = await stat(file);
  res.writeHead(200, { "content-length": size });
  if (size <= 256 * 1024) res.end(await readFile(file));
  else await pipeline(createReadStream(file, { highWaterMark: 1024 * 1024 }), res);
}

await mkdir(dir, { recursive: true });
http
  .createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(404, { "content-length": 0 });
      res.end();
    });
  })
  .listen(port, "127.0.0.1", () => process.stdout.write("ready\n"));
