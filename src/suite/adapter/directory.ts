import type { SuiteDirectory } from "../provider.js";
import type { SuiteApiClient } from "./api-client.js";

/** The NAVER WORKS-style directory (directory part: to be built). */
export function worksDirectory(api: SuiteApiClient): SuiteDirectory {
  void api;
  const todo = () => Promise.reject(new Error("suite directory: not built yet"));
  return { units: todo, members: todo, member: todo };
}
