import type { FastifyInstance } from "fastify";
import { ApiError } from "./errors.js";

/**
 * The deepest nesting of arrays and objects a JSON body may have. Free-form fields (build event `detail`,
 * MCP `params`) are stored and serialized again by recursive code (JSON.stringify, jsonb), which overflows
 * the stack near a few thousand levels; no real document needs more than a few dozen.
 */
export const MAX_JSON_DEPTH = 64;

/** True when the JSON text nests arrays/objects deeper than `max`: one pass over the text, no recursion. */
export function nestsDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: the next character is escaped
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}

/**
 * Every JSON body of every route is checked for depth before it is parsed: the default parser (Fastify's, with its
 * prototype-poisoning checks) then runs as before. Routes with their own parser (raw uploads, signed webhooks) keep it.
 */
export function boundJsonDepth(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser("error", "error");
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser("application/json", { parseAs: "string" }, (request, body, done) => {
    const text = body as string; // parseAs: "string"
    if (nestsDeeperThan(text, MAX_JSON_DEPTH))
      return done(
        new ApiError("invalid_request", `The JSON body nests objects and arrays deeper than ${MAX_JSON_DEPTH} levels.`),
        undefined,
      );
    parse(request, text, done);
  });
}
