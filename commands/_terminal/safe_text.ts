// The one filter between text that came from a transcript and a terminal: every character a
// terminal would act on (escape sequences, C1 controls, carriage returns, bidi overrides) is
// shown as visible text instead, so nothing a transcript holds can move the cursor, clear the
// screen, set the clipboard or the window title, open a link, or reorder what the reader sees.

// C0 controls but tab, DEL, C1 controls (as code points: a string holds what UTF-8 decoded),
// and the bidi embeddings, overrides and isolates of "Trojan Source" (CVE-2021-42574). A CRLF
// is matched whole so that, where newlines are kept, it stays one line end; newline itself is
// not matched in multi-line text, so that ordinary text costs no callback per line.
// deno-lint-ignore no-control-regex -- control characters are exactly what is made visible
const UNSAFE_LINE = /\r\n|[\0-\x08\n-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/g;
// deno-lint-ignore no-control-regex -- control characters are exactly what is made visible
const UNSAFE_MULTI = /\r\n|[\0-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/g;

/**
 * `text` made safe to print on a terminal: ESC is shown as `␛`, every other C0 or C1 control
 * and DEL as `\xNN`, a bidi control as `\uNNNN`. Tab is kept; newline is kept (a CRLF becomes a
 * newline) only with `multiline`, for text whose layout needs line ends; a lone CR is always
 * shown, since it would let a line overwrite what came before it. Invalid UTF-8 was replaced by
 * U+FFFD when the bytes were decoded, and a lone surrogate is written as U+FFFD by the encoder.
 * Filter text before styling it: the styler's own colour codes must not pass through here.
 *
 * @example
 * safeText("ok\x1b]52;c;ZXZpbA==\x07"); // "ok␛]52;c;ZXZpbA==\x07"
 */
export function safeText(text: string, options: { multiline?: boolean } = {}): string {
  const multiline = options.multiline === true;
  return text.replace(multiline ? UNSAFE_MULTI : UNSAFE_LINE, (c) => {
    if (c === "\x1b") return "␛";
    if (c === "\r\n") return multiline ? "\n" : "\\x0d\\x0a";
    const code = c.charCodeAt(0);
    return code > 0xff
      ? `\\u${code.toString(16).padStart(4, "0")}`
      : `\\x${code.toString(16).padStart(2, "0")}`;
  });
}
