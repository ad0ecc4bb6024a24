import type { EdgeTarget } from "../../kernel/contracts.js";
import { addInto, emptyHistogram } from "./histogram.js";

/** The counters of one app over one span (a day's row, a minute's, an hour's): counts of two spans add. */
export interface Counts {
  requests: number;
  status4xx: number;
  status5xx: number;
  /** bytes sent (sites' series; minute rows of before migration 074 count 0) */
  bytesOut: number;
  /** counts per latency bucket (histogram.ts) */
  latency: number[];
}

/** Requests of one app in one minute counted elsewhere (the nginx data plane's own answers), added as they are. */
export interface CountsOf extends Counts {
  target: EdgeTarget;
  /** epoch ms of the minute's start */
  minute: number;
}

export const zeroCounts = (): Counts => ({
  requests: 0,
  status4xx: 0,
  status5xx: 0,
  bytesOut: 0,
  latency: emptyHistogram(),
});

/** Counts one answered request (its status, latency bucket and bytes sent). */
export function countRequest(c: Counts, status: number, bucket: number, bytes: number): void {
  c.requests++;
  if (status >= 400 && status < 500) c.status4xx++;
  else if (status >= 500) c.status5xx++;
  c.bytesOut += bytes;
  c.latency[bucket]++;
}

/** Adds `more`'s counters into `into` (latency buckets element-wise). */
export function addCounts(into: Counts, more: Counts): void {
  into.requests += more.requests;
  into.status4xx += more.status4xx;
  into.status5xx += more.status5xx;
  into.bytesOut += more.bytesOut;
  addInto(into.latency, more.latency);
}
