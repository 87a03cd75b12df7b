// The bounds of the work a capture batch does: small enough to keep memory bounded and the
// event loop responsive, large enough that SQLite's per-transaction cost stays small.

/** Tunable bounds of the work one batch does. */
export interface Limits {
  /** Largest raw chunk stored in one record row; longer lines span several rows. */
  chunkSize: number;
  /** A batch commits after about this much derived text (one record may cross it). */
  textBudget: number;
  /** A batch also commits after this much raw (records without text still move the cursor). */
  rawBudget: number;
  /** Lines longer than this are streamed instead of parsed in memory. */
  maxLine: number;
  /**
   * A capture with at least this many new source bytes writes its batches in a worker, so
   * SQLite's work on one batch overlaps with reading and parsing the next.
   */
  workerFrom: number;
}

export const DEFAULT_LIMITS: Limits = {
  chunkSize: 64 * 1024,
  textBudget: 512 * 1024,
  rawBudget: 8 * 1024 * 1024,
  maxLine: 8 * 1024 * 1024,
  workerFrom: 16 * 1024 * 1024,
};
