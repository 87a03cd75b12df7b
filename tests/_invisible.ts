// The fixture of characters a reader cannot see (fixtures/invisible/), copied into a world's
// agent roots, and text written in tag characters for tests to plant.

import { cpSync } from "node:fs";
import { join } from "node:path";
import { FIXTURES, type World } from "./_helpers.ts";

/** The fixture's session id and conversation id. */
export const INVISIBLE = {
  sid: "3c9e7b1a-5f2d-4e8c-a6b0-9d1e2f3a4b5c",
  id: "claude:3c9e7b1a-5f2d-4e8c-a6b0-9d1e2f3a4b5c",
} as const;

/** Copies the invisible-characters transcript into `world` (capture it after). */
export function addInvisible(world: World): void {
  cpSync(join(FIXTURES, "invisible", "claude", "projects"), join(world.claude, "projects"), {
    recursive: true,
  });
}

/** `text` (printable ASCII) written in tag characters, U+E0020–E007E, invisible on screen. */
export function tags(text: string): string {
  return [...text].map((c) => String.fromCodePoint(0xe0000 + c.charCodeAt(0))).join("");
}
