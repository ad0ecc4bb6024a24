import type { SuiteBilling } from "../provider.js";
import type { SuiteApiClient } from "./api-client.js";

/** The marketplace-style metering API (billing part: to be built). */
export function meteringBilling(api: SuiteApiClient, category: string): SuiteBilling {
  void api;
  void category;
  const todo = () => Promise.reject(new Error("suite billing: not built yet"));
  return { allowance: todo, reportUsage: todo };
}
