// The interactive session picker of `resume` (@inquirer/search): filter as you type, Enter picks;
// every row passes the caller's gate and terminal filter before it is shown.

import { type PickerRow, rowLabel } from "../../lib/sessions/resume.ts";

/** What the picker says beside a manifest run, which Enter cannot pick. */
export const MANIFEST_MARK = "(a manifest run: it cannot be continued; resume <id> prints it)";

/**
 * The interactive picker (filter as you type, Enter picks). Manifest runs are marked and cannot
 * be picked. Everything of a row that reaches the terminal passes `shown` first: the caller's
 * gate and terminal filter (titles and keys come from transcripts). Resolves to undefined when
 * the user cancels (Ctrl-C, Escape).
 */
export async function pickRow(
  rows: readonly PickerRow[],
  now: number,
  options: { message?: string; shown: (text: string) => string },
): Promise<PickerRow | undefined> {
  const message = options.message ?? "Resume which session? (type to filter)";
  const { shown } = options;
  // Loaded here, so that commands which never show the picker do not load it.
  const { default: search } = await import("@inquirer/search");
  try {
    return await search<PickerRow>({
      message,
      pageSize: 12,
      source: (term) => {
        const words = (term ?? "").toLowerCase().split(/\s+/).filter(Boolean);
        return rows
          // The title is shown before the label cuts and pads it, so the columns line up.
          .map((row) => ({ row, label: shown(rowLabel({ ...row, title: shown(row.title) }, now)) }))
          .filter(({ row, label }) => {
            const hay = `${label} ${row.key}`.toLowerCase();
            return words.every((w) => hay.includes(w));
          })
          .map(({ row, label }) => ({
            value: row,
            name: label,
            short: shown(row.key),
            ...(row.manifest ? { disabled: MANIFEST_MARK } : {}),
          }));
      },
    });
  } catch (err) {
    if (
      err instanceof Error && (err.name === "ExitPromptError" || err.name === "AbortPromptError")
    ) {
      return undefined;
    }
    throw err;
  }
}
