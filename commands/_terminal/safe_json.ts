// JSON for a terminal or a pipe: exact JSON that holds no character a terminal would act on.
// JSON.stringify escapes C0 controls but writes DEL, C1 controls and bidi overrides as they are.

// Only ever inside a JSON string, where an escape stands for the same character.
const UNESCAPED = /[\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/**
 * `JSON.stringify(value)` with DEL, C1 controls, the line and paragraph separators and the bidi
 * controls escaped as `\uNNNN` too: it parses back to exactly the same value.
 */
export function safeJson(value: unknown): string {
  const json = JSON.stringify(value);
  if (json === undefined) throw new TypeError("Cannot write this value as JSON");
  return json.replace(UNESCAPED, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
