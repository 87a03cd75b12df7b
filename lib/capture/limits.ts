// The bounds of the work a capture batch does: small enough to keep memory bounded and the
// event loop responsive, large enough that SQLite's per-transaction cost stays small.

/** Tunable bounds of the work one batch does. */
export interface Limits {
  /** Largest raw chunk stored in one record row; longer lines span several rows. */
  chunkSize: number;
  /** A batch commits after about this much derived text (one record may cross it). */
  textBudget: number;
  /**
   * A batch also commits after this much raw (records without text still move the cursor).
   * Up to three batches are held at once (one read, two in flight), each record's bytes and
   * parsed fields with them: at 8 MiB, a run of small rows with little text (an OpenCode
   * database, a subagent's copy of its parent) took capture's peak 50 MiB higher than the rest.
   */
  rawBudget: number;
  /**
   * A batch also commits once a read takes it past this many records. Each record holds its
   * parsed fields until the batch commits, and small rows come thousands to 2 MiB: an OpenCode
   * database's messages, 3,600 a batch, took a capture's heap from 27 to 58 MiB.
   */
  recordBudget: number;
  /** Lines longer than this are streamed instead of parsed in memory. */
  maxLine: number;
  /**
   * A streamed line's text is indexed, and shown, in pieces of about this many characters, each
   * at the row it starts at: a shorter text is one piece however many rows its line spans. Its
   * size bounds the memory a piece takes and the work of a snippet of it.
   */
  textPiece: number;
  /**
   * A capture with at least this many new source bytes writes its batches in a worker, so
   * SQLite's work on one batch overlaps with reading and parsing the next.
   */
  workerFrom: number;
  /**
   * A pass over a store with at least this many sources reads their rows in a worker while it
   * finds the files (`loadSourcesAside`): fewer are read inline in less time than a worker takes
   * to start (at about 4 µs a row, 20,000 take 80 ms).
   */
  knownAsideFrom: number;
}

export const DEFAULT_LIMITS: Limits = {
  chunkSize: 64 * 1024,
  textBudget: 512 * 1024,
  rawBudget: 2 * 1024 * 1024,
  recordBudget: 1000,
  maxLine: 8 * 1024 * 1024,
  textPiece: 1024 * 1024,
  workerFrom: 16 * 1024 * 1024,
  knownAsideFrom: 20_000,
};
