/** What the meta tests share: reading the manual and the OpenAPI document against the route table. */
import type { RouteEntry } from "../../src/http/route-table.js";

export const HANGUL = /[\uac00-\ud7a3]/;
/** Routes only the platform operator can call (operator token or fleet token); the manual leaves them out. */
export const operatorOnly = (r: RouteEntry) => "operator" in r.auth || "fleet" in r.auth;
export const manualLine = (r: RouteEntry) => `${r.method} ${r.url.replace(/:(\w+)/g, "{$1}")} - `;
export const openApiPath = (url: string) => url.replace(/:(\w+)/g, "{$1}");
