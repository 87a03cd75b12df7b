// A world whose transcripts attack the page that shows them: script tags, `javascript:` and
// `data:` links, `onerror`/`onload` attributes and Markdown images in messages, the title, the
// cwd, the branch and the session id. Every attack, if it ran, would set `window.__pwned`.

import assert from "node:assert/strict";
import { join } from "node:path";
import { main as reindex } from "../../commands/reindex.ts";
import { captureIo, makeWorld, type World } from "../_helpers.ts";

/** What an attack runs: sets a flag the browser test reads. */
const RUN = "window.__pwned=1";

/** Markup and Markdown that would run `RUN` if rendered as written. */
export const ATTACKS = [
  `<script>${RUN}</script>`,
  `<img src=x onerror="${RUN}">`,
  `<svg onload="${RUN}"></svg>`,
  `<iframe src="javascript:${RUN}"></iframe>`,
  `[click me](javascript:${RUN})`,
  `[data link](data:text/html,<script>${RUN}</script>)`,
  `![image](javascript:${RUN})`,
  `![pixel](http://127.0.0.1:9/pixel.png)`,
  `<javascript:${RUN}>`,
  `<a href="javascript:${RUN}">raw anchor</a>`,
  `[ref link][r]\n\n[r]: javascript:${RUN}`,
  `<details open ontoggle="${RUN}">x</details>`,
  "<style>body{display:none}</style>",
];

/** The hostile session's id: the characters an id may hold that HTML cares about. */
export const HOSTILE_SID = `9e0c"'<b>-hostile`;
/** The hostile conversation's id. */
export const HOSTILE_ID = `claude:${HOSTILE_SID}`;
/** A word that finds every hostile message. */
export const HOSTILE_WORD = "basilisk";

function lines(): string {
  const base = {
    isSidechain: false,
    userType: "external",
    cwd: `/home/dev/src/<img src=x onerror="${RUN}">`,
    sessionId: HOSTILE_SID,
    version: "2.1.40",
    gitBranch: `<script>${RUN}</script>`,
  };
  let t = Date.parse("2026-09-21T09:00:00.000Z");
  const at = () => new Date(t += 1000).toISOString();
  const out: unknown[] = [];
  let parent: string | null = null;
  ATTACKS.forEach((attack, i) => {
    const q = `00000000-0000-4000-8000-${String(2 * i).padStart(12, "0")}`;
    const a = `00000000-0000-4000-8000-${String(2 * i + 1).padStart(12, "0")}`;
    out.push({
      ...base,
      parentUuid: parent,
      type: "user",
      uuid: q,
      timestamp: at(),
      message: { role: "user", content: `${HOSTILE_WORD} question ${i}: ${attack}` },
    });
    out.push({
      ...base,
      parentUuid: q,
      type: "assistant",
      uuid: a,
      timestamp: at(),
      message: {
        model: "claude-opus-4-6",
        id: `msg_hostile${i}`,
        type: "message",
        role: "assistant",
        content: [{
          type: "text",
          text: `${HOSTILE_WORD} answer ${i}:\n\n${attack}\n\n\`\`\`html\n${attack}\n\`\`\`\n`,
        }],
      },
    });
    parent = a;
  });
  out.push({
    type: "custom-title",
    customTitle: `${HOSTILE_WORD} <img src=x onerror="${RUN}"> [t](javascript:${RUN})`,
    sessionId: HOSTILE_SID,
  });
  return out.map((l) => JSON.stringify(l)).join("\n") + "\n";
}

/** A world with the Claude fixtures and the hostile conversation, captured. */
export async function hostileWorld(): Promise<World> {
  const world = await makeWorld({ fixtures: ["claude"] });
  const dir = join(world.claude, "projects", "-home-dev-src-hostile");
  await Deno.mkdir(dir, { recursive: true });
  await Deno.writeTextFile(join(dir, `${HOSTILE_SID}.jsonl`), lines());
  const io = captureIo();
  assert.equal(await reindex(["--quiet"], io, world.env), 0, io.stderr());
  return world;
}
