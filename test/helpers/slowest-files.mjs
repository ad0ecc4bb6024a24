import { appendFileSync } from "node:fs";

/**
 * A second reporter for `npm test` (test/run.ts): each test file's whole duration, appended as it ends to the file
 * TEST_TIMINGS_FILE names, so test/run.ts can print the slowest after the run (--test-force-exit may end the
 * process before a reporter's last output). Plain JavaScript: node loads reporters before tsx's hooks.
 */
export default async function* fileTimings(source) {
  for await (const event of source) {
    // each file ends with one event named by its path, its duration the file's whole run
    if (
      event.type === "test:complete" &&
      event.data.file &&
      event.data.name === event.data.file &&
      process.env.TEST_TIMINGS_FILE
    )
      appendFileSync(process.env.TEST_TIMINGS_FILE, `${event.data.details?.duration_ms ?? 0}\t${event.data.file}\n`);
  }
  yield "";
}
