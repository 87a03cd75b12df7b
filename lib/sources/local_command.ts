// Claude Code's local commands (`/cost`, `/clear`) as its transcripts log them: a user message
// holding the command in tags, then its output or a caveat in tags of their own. The terminal and
// the dashboard show each as one small line of what was typed, or of what it printed.

/** What a local command was typed as. */
export type LocalCommand = { command: string } | { output: string } | { note: string };

/** A local command of Claude Code (`/cost`), its output or its caveat, from the text it logs. */
export function localCommand(
  text: string,
): LocalCommand | null {
  const command = /^\s*<command-name>([^<]*)<\/command-name>/.exec(text);
  if (command) {
    const args = /<command-args>([^<]*)<\/command-args>/.exec(text)?.[1]?.trim() ?? "";
    return { command: `${command[1]!.trim()}${args ? ` ${args}` : ""}` };
  }
  const output = /^\s*<local-command-(stdout|stderr)>([\s\S]*?)(<\/local-command-\1>|$)/.exec(
    text,
  );
  // deno-lint-ignore no-control-regex -- the colour codes a terminal command printed
  if (output) return { output: output[2]!.replace(/\x1b\[[0-9;]*m/g, "").trim() };
  const note = /^\s*<local-command-caveat>([\s\S]*?)<\/local-command-caveat>/.exec(text);
  if (note) return { note: note[1]!.trim() };
  return null;
}
