import type { ReactNode } from "react";
import { useI18n } from "./i18n";
import { Link } from "./router";
import { Card, ErrorNote, Spinner } from "./ui";

/** A page's heading: the title, an optional intro, and a create link or a link back. */
export function PageHead(props: {
  title: string;
  intro?: string;
  create?: { to: string; label: string };
  back?: string;
}) {
  const { t } = useI18n();
  return (
    <div className="page-head">
      {props.intro === undefined ? (
        <h1>{props.title}</h1>
      ) : (
        <div>
          <h1>{props.title}</h1>
          <p className="muted">{props.intro}</p>
        </div>
      )}
      {props.create && (
        <Link to={props.create.to} className="btn primary">
          {props.create.label}
        </Link>
      )}
      {props.back && (
        <Link to={props.back} className="btn ghost">
          {t("common.back")}
        </Link>
      )}
    </div>
  );
}

/**
 * A loaded list's states: the error, a spinner while it loads, the empty text, or the rows. With `card` (a page's
 * list) the empty text and the rows each sit in a card; without, they are shown as they are (inside a card).
 */
export function Loaded<T>(props: {
  list: { data: T[] | null; error: unknown };
  empty: string;
  children: (rows: T[]) => ReactNode;
  card?: boolean;
  /** What the error note shows; the list's own error unless given. */
  error?: unknown;
  /** Shown between the error and the rest. */
  note?: ReactNode;
  spinner?: boolean;
}) {
  const { t } = useI18n();
  const { list, card = false } = props;
  const wrap = (node: ReactNode) => (card ? <Card>{node}</Card> : node);
  return (
    <>
      <ErrorNote error={props.error ?? list.error} />
      {props.note}
      {props.spinner !== false && !list.data && !list.error && <Spinner label={t("common.loading")} />}
      {list.data && list.data.length === 0 && wrap(<p className="empty">{props.empty}</p>)}
      {list.data && list.data.length > 0 && wrap(props.children(list.data))}
    </>
  );
}

/** A table column: its heading, a class for its heading and cells (`cellClass` when the cells differ), its cell. */
export interface Column<T> {
  head: ReactNode;
  className?: string;
  cellClass?: string;
  cell: (row: T) => ReactNode;
}

/** A heading only screen readers read (a column of buttons). */
export const srOnly = (text: string) => <span className="sr-only">{text}</span>;

/** Rows as a table, columns given as data. */
export function ResourceTable<T extends { id: string }>(props: {
  rows: T[];
  columns: (Column<T> | false)[];
  testId?: string;
  /** data-* attributes of each row. */
  rowData?: (row: T) => Record<`data-${string}`, string>;
}) {
  const columns = props.columns.filter((c): c is Column<T> => c !== false);
  return (
    <div className="table-wrap">
      <table data-testid={props.testId}>
        <thead>
          <tr>
            {columns.map((c, i) => (
              <th key={i} className={c.className}>
                {c.head}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {props.rows.map((row) => (
            <tr key={row.id} {...props.rowData?.(row)}>
              {columns.map((c, i) => (
                <td key={i} className={c.cellClass ?? c.className}>
                  {c.cell(row)}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** A page listing resources: its head with a create link, then the list as a table in a card. */
export function ListPage<T extends { id: string }>(props: {
  title: string;
  intro?: string;
  create?: { to: string; label: string };
  list: { data: T[] | null; error: unknown };
  empty: string;
  columns: (Column<T> | false)[];
  error?: unknown;
  note?: ReactNode;
  testId?: string;
  rowData?: (row: T) => Record<`data-${string}`, string>;
}) {
  return (
    <>
      <PageHead title={props.title} intro={props.intro} create={props.create} />
      <Loaded list={props.list} empty={props.empty} error={props.error} note={props.note} card>
        {(rows) => <ResourceTable rows={rows} columns={props.columns} testId={props.testId} rowData={props.rowData} />}
      </Loaded>
    </>
  );
}

/** A small button acting on one row, named for it to screen readers ("Delete web-1"). */
export function RowButton(props: {
  label: string;
  target: string;
  kind?: "primary" | "danger";
  busy: boolean;
  onClick: () => void;
}) {
  return (
    <button
      type="button"
      className={props.kind ? `btn small ${props.kind}` : "btn small"}
      disabled={props.busy}
      aria-label={`${props.label} ${props.target}`}
      onClick={props.onClick}
    >
      {props.label}
    </button>
  );
}

/** A row's delete button. */
export function DeleteButton({ target, busy, onClick }: { target: string; busy: boolean; onClick: () => void }) {
  const { t } = useI18n();
  return <RowButton label={t("common.delete")} target={target} kind="danger" busy={busy} onClick={onClick} />;
}
