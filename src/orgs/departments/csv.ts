/**
 * The chart's CSV files (RFC 4180 through csv-parse): a header row naming the columns is required (any order,
 * case-insensitive), empty lines are ignored, a UTF-8 BOM is dropped, quoted fields may hold commas, quotes and line
 * breaks. Every mistake is a 400 invalid_request naming the line (the line a row starts on, counted from 1 with the
 * header).
 */
import { parse, CsvError } from "csv-parse/sync";
import { ApiError } from "../../http/errors.js";
import { normaliseEmail } from "../../auth/secrets.js";
import type { DepartmentInput } from "./plan.js";
import type { MemberInput } from "./member-plan.js";
import { CODE_PATTERN, EMAIL_PATTERN, MAX_CODE, MAX_DEPARTMENTS, MAX_MEMBERS, MAX_NAME } from "./limits.js";

const invalid = (message: string) => new ApiError("invalid_request", message);

interface Row {
  line: number;
  cells: Map<string, string>;
}

/** Rows of a CSV with the header's columns; `required` columns must be in the header, no others than `optional`. */
export function csvRows(text: string, required: string[], optional: string[], maxRows: number): Row[] {
  let records: { record: string[]; info: { lines: number } }[];
  try {
    // with info: true each record comes with its position (the typings describe the plain form)
    records = parse(text, {
      bom: true,
      info: true,
      skip_empty_lines: true,
      trim: true,
      relax_column_count: true,
    }) as unknown as typeof records;
  } catch (err) {
    if (err instanceof CsvError) {
      const line = (err as CsvError & { lines?: number }).lines;
      const message = err.message.replace(/\s+(on|at) line \d+\s*$/, "");
      throw invalid(`${line !== undefined ? `line ${line}: ` : ""}${message}`);
    }
    throw err;
  }
  const all = [...required, ...optional].join(",");
  if (!records.length) throw invalid(`The CSV is empty; its first line is the header row: ${all}.`);
  const header = records[0].record.map((h) => h.toLowerCase());
  const missing = required.filter((c) => !header.includes(c));
  if (missing.length)
    throw invalid(`line 1: the header row must name the columns ${all} (missing ${missing.join(", ")}).`);
  header.forEach((h, i) => {
    if (![...required, ...optional].includes(h))
      throw invalid(`line 1: unknown column "${h}"; the columns are ${all}.`);
    if (header.indexOf(h) !== i) throw invalid(`line 1: the column ${h} is named twice.`);
  });
  if (records.length - 1 > maxRows) throw invalid(`The CSV has ${records.length - 1} rows; at most ${maxRows}.`);
  return records.slice(1).map(({ record, info }) => {
    // info.lines is the line the record ends on; quoted line breaks inside it move its start up
    const breaks = record.reduce((n, field) => n + (field.match(/\n/g)?.length ?? 0), 0);
    const line = info.lines - breaks;
    if (record.length > header.length)
      throw invalid(`line ${line}: ${record.length} fields, but the header names ${header.length} columns.`);
    return { line, cells: new Map(header.map((h, i) => [h, record[i] ?? ""])) };
  });
}

const codeRe = new RegExp(CODE_PATTERN, "u");
const emailRe = new RegExp(EMAIL_PATTERN, "u");

function code(line: number, column: string, value: string): string {
  if (value.length > MAX_CODE) throw invalid(`line ${line}: ${column} is longer than ${MAX_CODE} characters.`);
  if (!codeRe.test(value)) throw invalid(`line ${line}: ${column} "${value}" has control characters.`);
  return value;
}

function email(line: number, column: string, value: string): string {
  if (value.length > 254 || !emailRe.test(value))
    throw invalid(`line ${line}: ${column} "${value}" is not an e-mail address.`);
  return normaliseEmail(value);
}

/** Departments CSV: code,name,parent_code,approver_email (the last two may be empty or left out). */
export function departmentsCsv(text: string): DepartmentInput[] {
  return csvRows(text, ["code", "name"], ["parent_code", "approver_email"], MAX_DEPARTMENTS).map(({ line, cells }) => {
    const c = cells.get("code")!;
    const name = cells.get("name")!;
    if (!c) throw invalid(`line ${line}: code is empty.`);
    if (!name) throw invalid(`line ${line}: name is empty.`);
    if (name.length > MAX_NAME) throw invalid(`line ${line}: name is longer than ${MAX_NAME} characters.`);
    const parent = cells.get("parent_code") ?? "";
    const approver = cells.get("approver_email") ?? "";
    return {
      code: code(line, "code", c),
      name,
      parent_code: parent ? code(line, "parent_code", parent) : null,
      approver_email: approver ? email(line, "approver_email", approver) : null,
      line,
    };
  });
}

/**
 * Members CSV: email,department_code,role. An empty department_code takes the member out of their department; an
 * empty role, or a column left out of the header, leaves that field as it is.
 */
export function membersCsv(text: string): MemberInput[] {
  return csvRows(text, ["email"], ["department_code", "role"], MAX_MEMBERS).map(({ line, cells }) => {
    const address = cells.get("email")!;
    if (!address) throw invalid(`line ${line}: email is empty.`);
    const row: MemberInput = { email: email(line, "email", address), line };
    const department = cells.get("department_code");
    if (department !== undefined) row.department_code = department ? code(line, "department_code", department) : null;
    const role = cells.get("role")?.toLowerCase();
    if (role === "admin" || role === "member") row.role = role;
    else if (role) throw invalid(`line ${line}: role "${role}" is not admin or member.`);
    return row;
  });
}
