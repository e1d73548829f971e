/**
 * Statements compiled once, executed many times. Kysely builds and compiles a query every time it
 * runs one: for the projections' writes of every usage event (multi-row inserts of thousands of
 * values, one update per rollup row touched) that building cost about as much CPU as the database
 * running them. These helpers let Kysely compile a statement once per database dialect and shape,
 * and then execute the same SQL text with new values (so SQLite's statement cache, which keeps
 * prepared statements by text, prepares each shape once too).
 *
 * Dialect-neutral by construction: the SQL text is Kysely's own for the dialect at hand (cached
 * per dialect adapter), and the first compilation of each shape checks that the values land in
 * the parameter positions this module assumes.
 */
import { CompiledQuery, SqliteAdapter, type Compilable, type Kysely, type QueryResult } from 'kysely';

// Any Kysely instance or transaction: the helpers only compile and execute.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDb = Kysely<any>;

/** Compiled statements by dialect adapter (shared by a Kysely instance and its transactions), then by shape. */
const texts = new WeakMap<object, Map<string, Compiled>>();

interface Compiled {
  sql: string;
  /** Where each bound parameter's value comes from (preparedStatement: the index of its name). */
  order: readonly number[];
}

function cacheOf(db: AnyDb): Map<string, Compiled> {
  const adapter = db.getExecutor().adapter;
  let cache = texts.get(adapter);
  if (!cache) texts.set(adapter, (cache = new Map()));
  return cache;
}

/**
 * Executes the statement `build` writes, with `parameters`, compiling it only the first time
 * `shape` is seen on this dialect. `build` must produce the same SQL text for every call with the
 * same `shape`, binding exactly `parameters` in their order (checked when it is compiled). The
 * array is handed over (Kysely freezes it).
 */
export async function executeCompiled(db: AnyDb, shape: string, parameters: readonly unknown[], build: () => Compilable<unknown>): Promise<QueryResult<unknown>> {
  const cache = cacheOf(db);
  let compiled = cache.get(shape);
  if (!compiled) {
    const query = build().compile();
    const same = query.parameters.length === parameters.length && query.parameters.every((value, i) => value === parameters[i]);
    if (!same) throw new Error(`compiled statement ${shape}: the parameters are not bound as given`);
    cache.set(shape, (compiled = { sql: query.sql, order: [] }));
  }
  return db.executeQuery(CompiledQuery.raw(compiled.sql, parameters as unknown[]));
}

/** The lengths a padded IN list takes, and the most values one carries. */
const IN_LIST_SIZES = [1, 16, 128];
const MAX_IN_LIST = 128;

/**
 * Runs a SELECT whose only bound values are one IN list, `build(list)`, for every 128 of `values`
 * (distinct), each list padded to 1, 16 or 128 values by repeating its first (which changes no
 * IN): three statement texts per query whatever the batch sizes, each compiled once. Returns
 * the rows of every part, in order.
 */
export async function selectWhereIn<Row>(db: AnyDb, shape: string, values: readonly unknown[], build: (list: readonly unknown[]) => Compilable<unknown>): Promise<Row[]> {
  const rows: Row[] = [];
  for (let start = 0; start < values.length; start += MAX_IN_LIST) {
    const part = values.slice(start, start + MAX_IN_LIST);
    const size = IN_LIST_SIZES.find((s) => s >= part.length)!;
    const list = part.concat(new Array<unknown>(size - part.length).fill(part[0]));
    const result = await executeCompiled(db, `${shape} in x${size}`, list, () => build(list));
    rows.push(...(result.rows as Row[]));
  }
  return rows;
}

/** The largest number of rows one INSERT carries (parameters: rows x columns, well below every dialect's limit). */
export const MAX_INSERT_ROWS = 128;

/**
 * The row counts of the INSERTs that write `n` rows on SQLite: full chunks of MAX_INSERT_ROWS,
 * then powers of two. SQLite runs statements in-process and keeps each text prepared (a prepare
 * of a wide multi-row INSERT costs more than running it), so a table sees at most eight INSERT
 * texts whatever the batch sizes, for a few more statements per batch.
 */
export function insertChunks(n: number): number[] {
  const sizes: number[] = [];
  let left = n;
  while (left >= MAX_INSERT_ROWS) {
    sizes.push(MAX_INSERT_ROWS);
    left -= MAX_INSERT_ROWS;
  }
  for (let size = MAX_INSERT_ROWS / 2; size >= 1; size /= 2) {
    if (left >= size) {
      sizes.push(size);
      left -= size;
    }
  }
  return sizes;
}

/**
 * The row counts on MySQL / PostgreSQL: full chunks, then the rest in one. Each statement is a
 * round trip to the server, which parses it again anyway (the drivers do not keep prepared
 * statements): the fewer statements the better, and a text per size costs only its compilation.
 */
export function serverInsertChunks(n: number): number[] {
  const sizes = new Array<number>(Math.floor(n / MAX_INSERT_ROWS)).fill(MAX_INSERT_ROWS);
  if (n % MAX_INSERT_ROWS > 0) sizes.push(n % MAX_INSERT_ROWS);
  return sizes;
}

/**
 * INSERT INTO `table` (`columns`) VALUES ... for every row, in order: the statements Kysely's
 * `insertInto(table).values(rows)` runs, compiled once per (table, columns, row count). A row
 * gives every column a value (null, not undefined: an absent value would be a DEFAULT).
 */
export async function insertRows<Row extends object>(db: AnyDb, table: string, columns: readonly (keyof Row & string)[], rows: readonly Row[]): Promise<void> {
  let start = 0;
  const sizes = db.getExecutor().adapter instanceof SqliteAdapter ? insertChunks(rows.length) : serverInsertChunks(rows.length);
  const width = columns.length;
  for (const size of sizes) {
    const first = start;
    start += size;
    // Sized once and filled by index: these arrays hold thousands of values per batch.
    const parameters = new Array<unknown>(size * width);
    for (let r = 0; r < size; r++) {
      const row = rows[first + r]!;
      for (let c = 0; c < width; c++) {
        const value = row[columns[c]!];
        if (value === undefined) throw new Error(`insertRows(${table}): no value for column ${columns[c]}`);
        parameters[r * width + c] = value;
      }
    }
    await executeCompiled(db, `insert ${table} (${columns.join(',')}) x${size}`, parameters, () =>
      db.insertInto(table).values(rows.slice(first, first + size).map((row) => Object.fromEntries(columns.map((c) => [c, row[c]])))),
    );
  }
}

/**
 * A value that stands for a named parameter while a statement template is compiled. Typed
 * `never` so that it fits wherever Kysely expects a column's value (it is only ever bound, never read).
 */
const placeholder = (name: string): never => `\u0000sy-param:${name}\u0000` as never;

/**
 * A statement of fixed shape with named values: `build` writes it with Kysely once per dialect,
 * using `param(name)` wherever a value goes; each call then executes the compiled text with the
 * values given. Every value of the statement must come from `param` (checked at compilation).
 */
export function preparedStatement<Name extends string>(
  id: string,
  names: readonly Name[],
  build: (db: AnyDb, param: (name: Name) => never) => Compilable<unknown>,
): (db: AnyDb, values: Readonly<Record<Name, unknown>>) => Promise<QueryResult<unknown>> {
  const shape = `statement ${id}`;
  return async (db, values) => {
    const cache = cacheOf(db);
    let compiled = cache.get(shape);
    if (!compiled) {
      const query = build(db, placeholder).compile();
      const order = query.parameters.map((value) => {
        const index = names.findIndex((name) => (placeholder(name) as unknown) === value);
        if (index < 0) throw new Error(`prepared statement ${id}: a value (${String(value)}) does not come from param()`);
        return index;
      });
      cache.set(shape, (compiled = { sql: query.sql, order }));
    }
    const parameters = compiled.order.map((index) => values[names[index]!]);
    return db.executeQuery(CompiledQuery.raw(compiled.sql, parameters));
  };
}
