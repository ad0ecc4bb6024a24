import { OutboundError } from "../net/outbound.js";
import { ApiError } from "./errors.js";

/**
 * Runs the check of an address a caller gave (a log drain's destination, a webhook's url): the outbound client's
 * refusal answers 400 naming the field, destination_forbidden for an address the platform does not call, else
 * invalid_request (not a URL, not resolving, ...).
 */
export async function refusedAs400<T>(field: string, check: () => Promise<T>): Promise<T> {
  try {
    return await check();
  } catch (err) {
    if (err instanceof OutboundError)
      throw new ApiError(
        err.reason === "forbidden" ? "destination_forbidden" : "invalid_request",
        `${field}: ${err.message}`,
      );
    throw err;
  }
}
