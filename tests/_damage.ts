// Damages a SQLite file the way a failing disk or a torn write does: one page of a chosen
// b-tree overwritten with zeros, or with a copy of another of its pages (a misdirected write:
// every page well formed, one in the wrong place), found through the DBSTAT virtual table. And
// a store whose text index is large enough for that: its term index spans several pages.

import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { claudeTranscript } from "./_claude_transcript.ts";
import { captureWorld, makeWorld, type World } from "./_helpers.ts";

/**
 * Zeroes the `nth` leaf page of the b-tree of `object` (a table or index) in the database at
 * `path`, which must not be open in WAL mode with unflushed pages. Returns the page number.
 */
export function zeroLeafPage(path: string, object: string, nth = 0): number {
  const { page, size } = leafPage(path, object, nth);
  writePage(path, page, new Uint8Array(size));
  return page;
}

/**
 * Writes over the `nth` leaf page of `object` a copy of its leaf page `from`, as a write sent to
 * the wrong place does: SQLite finds every page well formed. Returns the page overwritten.
 */
export function misplaceLeafPage(path: string, object: string, nth: number, from: number): number {
  const source = leafPage(path, object, from);
  const { page } = leafPage(path, object, nth);
  const bytes = new Uint8Array(source.size);
  const file = Deno.openSync(path, { read: true });
  try {
    file.seekSync((source.page - 1) * source.size, Deno.SeekMode.Start);
    if (file.readSync(bytes) !== source.size) throw new Error(`Short read of page ${source.page}`);
  } finally {
    file.close();
  }
  writePage(path, page, bytes);
  return page;
}

function leafPage(path: string, object: string, nth: number): { page: number; size: number } {
  const db = new DatabaseSync(path, { readOnly: true });
  try {
    const size = (db.prepare("PRAGMA page_size").get() as { page_size: number }).page_size;
    const row = db.prepare(
      "SELECT pageno FROM dbstat WHERE name = ? AND pagetype = 'leaf' ORDER BY pageno LIMIT 1 OFFSET ?",
    ).get(object, nth) as { pageno: number } | undefined;
    if (!row) throw new Error(`No leaf page ${nth} in "${object}"`);
    return { page: row.pageno, size };
  } finally {
    db.close();
  }
}

function writePage(path: string, page: number, bytes: Uint8Array): void {
  const file = Deno.openSync(path, { read: true, write: true });
  try {
    file.seekSync((page - 1) * bytes.length, Deno.SeekMode.Start);
    file.writeSync(bytes);
  } finally {
    file.close();
  }
}

/** How many distinct words `writeManyWords` writes: its term index then spans two pages. */
export const MANY_WORDS = 200_000;

/** The `i`th word `writeManyWords` writes (`w0`, `w1`, … `wz`, `w10`, in base 36). */
export function manyWord(i: number): string {
  return `w${i.toString(36)}`;
}

/**
 * Writes a Claude Code session into `world` that holds MANY_WORDS distinct words, each once, so
 * that the text index of a store capturing it has a term index (`fts_idx`) of more than one
 * leaf page, as a real store's has (a few MB of transcripts are enough).
 */
export function writeManyWords(world: World): void {
  const turns: [string, string][] = [];
  const perTurn = 500;
  for (let first = 0; first < MANY_WORDS; first += perTurn) {
    const words = Array.from({ length: perTurn }, (_, i) => manyWord(first + i));
    turns.push([words.slice(0, perTurn / 2).join(" "), words.slice(perTurn / 2).join(" ")]);
  }
  const cwd = "/home/dev/src/lexicon";
  const session = "5b1f3c2a-0d4e-4f6a-9b7c-8e9f0a1b2c3d";
  const dir = join(world.claude, "projects", cwd.replaceAll("/", "-"));
  Deno.mkdirSync(dir, { recursive: true });
  Deno.writeTextFileSync(join(dir, `${session}.jsonl`), claudeTranscript(session, cwd, turns));
}

/**
 * What the store at `path` makes of the words `writeManyWords` wrote (one in 100), read as a
 * search reads them (the index, and the records it names): those it no longer finds, with no
 * error (`hidden`: what a misplaced page of the term index hides), and those it fails on.
 */
export function damagedWords(path: string): { hidden: string[]; failing: string[] } {
  const db = new DatabaseSync(path, { readOnly: true });
  try {
    const sql =
      "SELECT count(*) AS n FROM fts JOIN records r ON r.id = fts.rowid WHERE fts MATCH ?";
    const hidden: string[] = [];
    const failing: string[] = [];
    for (let i = 0; i < MANY_WORDS; i += 100) {
      const word = manyWord(i);
      try {
        if ((db.prepare(sql).get(word) as { n: number }).n === 0) hidden.push(word);
      } catch {
        failing.push(word);
      }
    }
    return { hidden, failing };
  } finally {
    db.close();
  }
}

/**
 * A captured world (`writeManyWords`) whose store has the first page of its term index
 * overwritten by the second, with a word that the store then no longer finds and no read
 * reports: damage only a look at the term index shows.
 */
export async function misplacedIndexWorld(): Promise<{ world: World; path: string; word: string }> {
  const world = await makeWorld();
  try {
    writeManyWords(world);
    await captureWorld(world);
    const path = join(world.data, "history.db");
    misplaceLeafPage(path, "fts_idx", 0, 1);
    const { hidden, failing } = damagedWords(path);
    if (!hidden[0] || failing.length) throw new Error("The misplaced page hides no word quietly");
    return { world, path, word: hidden[0] };
  } catch (err) {
    await world.cleanup();
    throw err;
  }
}
