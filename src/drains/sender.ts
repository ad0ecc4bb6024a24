import net from "node:net";
import tls from "node:tls";
import { OutboundError, type Outbound } from "../net/outbound.js";
import { syslogAddresses, type Destination } from "./destination.js";

/** One line to ship, in the shape both formats are made from. */
export interface DrainRecord {
  /** RFC 3339 with the fraction the source had (ns for pod lines) */
  time: string;
  source: "pod" | "edge";
  /** syslog HOSTNAME: the app's slug, or the host the visitor asked for */
  hostname: string;
  /** syslog PROCID: the pod's or app's id */
  procId: string;
  /** syslog MSGID: stdout, stderr or access */
  stream: "stdout" | "stderr" | "access";
  message: string;
  /** what the NDJSON line carries besides time and message */
  fields: Record<string, unknown>;
}

/** A batch as NDJSON: one JSON object a line, each ending in a newline. */
export function ndjson(records: DrainRecord[]): string {
  let out = "";
  for (const r of records) out += JSON.stringify({ time: r.time, ...r.fields, message: r.message }) + "\n";
  return out;
}

/** A header field of RFC 5424: printable US-ASCII without spaces, bounded, "-" when empty. */
function field(value: string, max: number): string {
  const v = value.replace(/[^\x21-\x7e]/g, "_").slice(0, max);
  return v || "-";
}

/**
 * One RFC 5424 message: facility user (1); severity informational (6) for stdout and access lines, error (3) for
 * stderr. `<PRI>1 TIMESTAMP HOSTNAME APP-NAME PROCID MSGID - MSG`, APP-NAME `pod` or `edge`, no structured data.
 * RFC 5424 allows at most 6 digits of a second's fraction, so ns times are cut to µs.
 */
export function syslogMessage(r: DrainRecord): string {
  const pri = 1 * 8 + (r.stream === "stderr" ? 3 : 6);
  const time = r.time.replace(/\.(\d{6})\d+/, ".$1");
  const msg = r.message.replace(/[\r\n]+$/, "");
  return `<${pri}>1 ${time} ${field(r.hostname, 255)} ${r.source} ${field(r.procId, 128)} ${r.stream} - ${msg}`;
}

/** Octet-counting framing (RFC 6587 3.4.1, the only one RFC 5425 allows over TLS): `<length> <message>`. */
export function syslogFrames(records: DrainRecord[]): Buffer {
  const parts: Buffer[] = [];
  for (const r of records) {
    const m = Buffer.from(syslogMessage(r), "utf8");
    parts.push(Buffer.from(`${m.length} `, "ascii"), m);
  }
  return Buffer.concat(parts);
}

export interface SendOptions {
  headers: Record<string, string>;
  timeoutMs: number;
}

/**
 * Sends one batch; resolves when the receiver took it (a 2xx answer; for syslog, every byte written and the
 * connection closed cleanly: syslog has no acknowledgement of its own), throws with a sentence otherwise.
 */
export async function sendBatch(
  outbound: Outbound,
  dest: Destination,
  records: DrainRecord[],
  opts: SendOptions,
): Promise<void> {
  if (dest.kind === "http") {
    const res = await outbound.request(dest.url, {
      method: "POST",
      headers: {
        ...opts.headers,
        "content-type": "application/x-ndjson",
        "user-agent": "Platform-LogDrains/1.0",
      },
      body: ndjson(records),
      timeoutMs: opts.timeoutMs,
      maxBytes: 64 * 1024,
    });
    if (res.status < 200 || res.status >= 300) throw new Error(`answered ${res.status}`);
    return;
  }
  const addresses = await syslogAddresses(outbound, dest.host);
  await writeSyslog(dest, addresses[0], syslogFrames(records), opts.timeoutMs);
}

/** Connects to the checked address only (the name is not looked up again), writes, and closes. */
function writeSyslog(
  dest: Extract<Destination, { kind: "syslog" }>,
  address: string,
  bytes: Buffer,
  timeoutMs: number,
): Promise<void> {
  return new Promise((resolve, reject) => {
    let settled = false;
    const done = (err?: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (err) {
        socket.destroy();
        reject(err);
      } else resolve();
    };
    const socket = dest.tls
      ? tls.connect({ host: address, port: dest.port, servername: isIpHost(dest.host) ? undefined : dest.host })
      : net.connect({ host: address, port: dest.port });
    const timer = setTimeout(
      () =>
        done(new OutboundError("timeout", `${dest.host}:${dest.port} did not take the batch within ${timeoutMs} ms.`)),
      timeoutMs,
    );
    socket.once(dest.tls ? "secureConnect" : "connect", () => {
      socket.end(bytes);
    });
    socket.on("error", (err: NodeJS.ErrnoException) =>
      done(
        new OutboundError(
          "unreachable",
          `${dest.host}:${dest.port} could not be reached (${err.code ?? err.message}).`,
        ),
      ),
    );
    // the receiver may keep its side open: once ours is flushed and ended, the batch is handed over
    socket.once("finish", () => {
      done();
      socket.destroySoon();
    });
  });
}

const isIpHost = (host: string) => net.isIP(host) !== 0;
