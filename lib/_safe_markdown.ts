// Transcript text laid into a Markdown document so that a viewer renders no HTML from it and
// fetches nothing for it: outside code, every `<` becomes `&lt;` (no tag, comment or autolink
// can start) and every `![` becomes `!\[` (no image, which a viewer would load, as the dashboard
// shows none), while code stays as written. A viewer must agree with this module on what is
// code, so only what it cannot read otherwise is kept: fenced blocks are fenced anew (no line of
// theirs can close the fence, and none is left open for the rest of the document), no other line
// can open a fence, and a code span is trusted only where no backtick run earlier in the
// paragraph could still be open.

/** A fence opening a block (CommonMark: up to three spaces, then three backticks or tildes). */
const OPENING = /^( {0,3})(`{3,}|~{3,})(.*)$/;
/** A run that could open a fence, anywhere in a line of text (a list or quote may precede it). */
const FENCE_RUN = /`{3,}|~{3,}/g;
const BACKTICK = 0x60;
/** A line CommonMark counts as blank (spaces and tabs only), which ends a paragraph. */
const BLANK = /^[ \t]*$/;

/**
 * `text` as Markdown that renders as it would but without raw HTML or images: outside code, `<`
 * is written `&lt;` and `![` is written `!\[`; fenced code blocks, and code spans that cannot be
 * read otherwise, keep theirs.
 *
 * @example
 * safeMarkdown("Use `<b>` here: <script>x</script>"); // "Use `<b>` here: &lt;script>x&lt;/script>"
 */
export function safeMarkdown(text: string): string {
  const lines = text.split(/\r\n|\r|\n/);
  const out: string[] = [];
  // True once a backtick run of this paragraph found no closer on its own line: a viewer may
  // read the lines after it as inside that code span, so none of their spans is trusted.
  let inSpan = false;
  for (let i = 0; i < lines.length;) {
    const line = lines[i]!;
    const fence = OPENING.exec(line);
    if (fence && !(fence[2]!.startsWith("`") && fence[3]!.includes("`"))) {
      const block = fencedBlock(lines, i, fence[1]!, fence[2]!);
      out.push(...refenced(fence[1]!, fence[2]![0]!, fence[3]!, block.body));
      i = block.next;
      inSpan = false;
      continue;
    }
    if (BLANK.test(line)) inSpan = false;
    const escaped = escapeLine(line.replace(FENCE_RUN, "\\$&"), !inSpan);
    out.push(escaped.text);
    if (escaped.unclosed) inSpan = true;
    i++;
  }
  return out.join("\n");
}

/**
 * The lines of the block a fence opens at `lines[start]`: up to its closing fence (past it),
 * the end of the text, or a line less indented than the fence (a list holding it ends there).
 */
function fencedBlock(
  lines: readonly string[],
  start: number,
  indent: string,
  marker: string,
): { body: string[]; next: number } {
  const closing = new RegExp(`^ {0,3}${marker[0] === "`" ? "`" : "~"}{${marker.length},}[ \\t]*$`);
  const body: string[] = [];
  for (let i = start + 1; i < lines.length; i++) {
    const line = lines[i]!;
    if (closing.test(line)) return { body, next: i + 1 };
    if (!BLANK.test(line) && !line.startsWith(indent)) return { body, next: i };
    body.push(line);
  }
  return { body, next: lines.length };
}

/** A fenced block written with a fence longer than any run of its character in `body`. */
function refenced(indent: string, char: string, info: string, body: readonly string[]): string[] {
  let longest = 0;
  for (const line of body) {
    for (const run of line.matchAll(char === "`" ? /`+/g : /~+/g)) {
      longest = Math.max(longest, run[0].length);
    }
  }
  const fence = indent + char.repeat(Math.max(3, longest + 1));
  return [fence + info.replaceAll("<", "&lt;"), ...body, fence];
}

/**
 * One line of text with `<` escaped, inside code spans too unless `spans` (their code is kept
 * when the line starts outside any); `unclosed` when a backtick run found no closer on it.
 */
function escapeLine(line: string, spans: boolean): { text: string; unclosed: boolean } {
  if (!/[\\`]/.test(line)) return { text: inert(line), unclosed: false };
  const closer = closers(line);
  const out: string[] = [];
  let unclosed = false;
  let at = 0;
  const special = /[\\`<]|!\[/g;
  for (let m = special.exec(line); m; m = special.exec(line)) {
    const i = m.index;
    out.push(line.slice(at, i));
    if (m[0] === "<" || m[0] === "![") {
      out.push(inert(m[0]));
      at = i + m[0].length;
    } else if (m[0] === "\\") {
      // A backslash escapes the character after it: an escaped backtick opens no code span.
      out.push(inert(line.slice(i, i + 2)));
      at = i + 2;
    } else {
      let length = 1;
      while (line.charCodeAt(i + length) === BACKTICK) length++;
      const end = closer.after(i + length, length);
      if (end === -1) {
        unclosed = true;
        out.push(line.slice(i, i + length));
        at = i + length;
      } else {
        const span = line.slice(i, end);
        // A table splits its cells at `|` before it reads code spans.
        out.push(spans && !span.includes("|") ? span : inert(span));
        at = end;
      }
    }
    special.lastIndex = at;
  }
  out.push(line.slice(at));
  return { text: out.join(""), unclosed };
}

/** `text` with no HTML (`<` as `&lt;`) and no image, which a viewer would fetch (`!\[`). */
function inert(text: string): string {
  return text.replaceAll("<", "&lt;").replaceAll("![", "!\\[");
}

/**
 * The backtick runs of `line` by length, and `after(from, length)`: the index just past the
 * first run of exactly `length` backticks starting at or after `from`, or -1. Asked with `from`
 * never decreasing, as a line is read, it reads each run once however many are unclosed.
 */
function closers(line: string) {
  const starts = new Map<number, number[]>();
  for (const m of line.matchAll(/`+/g)) {
    const length = m[0].length;
    (starts.get(length) ?? starts.set(length, []).get(length)!).push(m.index);
  }
  const next = new Map<number, number>();
  return {
    after(from: number, length: number): number {
      const list = starts.get(length) ?? [];
      let k = next.get(length) ?? 0;
      while (k < list.length && list[k]! < from) k++;
      next.set(length, k);
      return k < list.length ? list[k]! + length : -1;
    },
  };
}
