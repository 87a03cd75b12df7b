// A Claude Code message holding a pasted screenshot and then a question (fixtures/pasted_image/),
// its image grown to a real screenshot's size: the line is stored as many chunk rows (and past
// 8 MiB streamed), yet `show`, `search`, an export and the dashboard, run as a user runs them,
// give its text whole, as one user message, and find a phrase of it; `show`'s pages hold such a
// line whole, so none of them is left with nothing to show.

import assert from "node:assert/strict";
import { join } from "node:path";
import { DEFAULT_LIMITS } from "../../lib/capture/limits.ts";
import { captureWorld, FIXTURES, makeWorld, runCli, type World } from "../_helpers.ts";
import { appFor, request } from "../servers/_dashboard.ts";
import { unescapeHtml } from "./_show.ts";

const SID = "4f7a2c9e-1b3d-4e5f-8a6b-7c8d9e0f1a2b";
const ID = `claude:${SID}`;
const FOLDER = join("claude", "projects", "-home-dev-src-kestrel");
const FIXTURE = join(FIXTURES, "pasted_image", FOLDER, `${SID}.jsonl`);

/** The fixture's lines, parsed. */
function fixtureLines(): Record<string, unknown>[] {
  return Deno.readTextFileSync(FIXTURE).trim().split("\n").map((l) => JSON.parse(l));
}

/** The text block after the image: what the user asked about it. */
const QUESTION = (() => {
  const message = fixtureLines()[2]!.message as { content: { type: string; text?: string }[] };
  return message.content.find((b) => b.type === "text")!.text!;
})();

/** `n` characters of base64 (deterministic, not a repeated run: a PNG's bytes look random). */
function base64(n: number): string {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const bytes = new Uint8Array(n);
  let x = 0x9e3779b9;
  for (let i = 0; i < n; i++) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    bytes[i] = alphabet.charCodeAt(x >>> 26);
  }
  return new TextDecoder().decode(bytes);
}

/** The fixture placed in `world` with its image's data grown to `size` bytes. */
function placeWithImage(world: World, size: number): void {
  const lines = fixtureLines();
  const message = lines[2]!.message as { content: { type: string; source?: { data: string } }[] };
  const image = message.content.find((b) => b.type === "image")!.source!;
  image.data += base64(size - image.data.length);
  const dir = join(world.dir, FOLDER);
  Deno.mkdirSync(dir, { recursive: true });
  Deno.writeTextFileSync(
    join(dir, `${SID}.jsonl`),
    lines.map((l) => JSON.stringify(l)).join("\n") + "\n",
  );
}

/** The messages `show` prints by who said them (`user`, `assistant`), in order. */
function speakers(stdout: string): string[] {
  return [...stdout.matchAll(/^\d{4}-\d\d-\d\d \d\d:\d\d (user|assistant)$/gm)].map((m) => m[1]!);
}

for (
  const [name, size] of [
    ["many chunk rows", 3 * 1024 * 1024],
    ["a streamed line", DEFAULT_LIMITS.maxLine + 1024 * 1024],
  ] as const
) {
  Deno.test(`the text after a pasted image is one message, found whole: ${name}`, async (t) => {
    const world = await makeWorld();
    try {
      placeWithImage(world, size);
      await captureWorld(world);

      await t.step("show prints one user message with the whole text, no payload", async () => {
        const shown = await runCli("show", [SID], world.vars);
        assert.equal(shown.code, 0, shown.stderr);
        assert.deepEqual(speakers(shown.stdout).slice(0, 3), ["user", "assistant", "user"]);
        assert.equal(speakers(shown.stdout).filter((s) => s === "user").length, 2, shown.stdout);
        assert.ok(shown.stdout.includes(`user\n${QUESTION}\n`), shown.stdout);
        assert.ok(!shown.stdout.includes("iVBORw0KGgo"), "the image's bytes are not shown");
      });

      if (size <= DEFAULT_LIMITS.maxLine) {
        await t.step("show's pages hold the line whole, and each shows a message", async () => {
          const said: string[] = [];
          let after: string[] = [];
          for (let pages = 1;; pages++) {
            const shown = await runCli("show", [SID, ...after], world.vars);
            assert.equal(shown.code, 0, shown.stderr);
            const page = speakers(shown.stdout);
            assert.ok(page.length > 0, `page ${pages} shows nothing: ${shown.stdout}`);
            said.push(...page);
            const more = /--after (\d+)/.exec(shown.stderr);
            if (!more) break;
            after = ["--after", more[1]!];
          }
          assert.deepEqual(said, ["user", "assistant", "user", "assistant"]);
        });
      }

      await t.step("search finds the phrase, quoted and not, with its snippet", async () => {
        for (const query of ['"marble gateway"', "marble gateway", '"kestrel diagram"']) {
          const found = await runCli("search", [query, "--json"], world.vars);
          assert.equal(found.code, 0, found.stderr);
          const hits = found.stdout.trim().split("\n").map((l) => JSON.parse(l)) as {
            conversation: string;
            snippet: string;
          }[];
          assert.equal(hits.length, 1, `${query}: ${found.stdout}`);
          assert.equal(hits[0]!.conversation, ID);
          assert.ok(hits[0]!.snippet.includes(query.replaceAll('"', "")), hits[0]!.snippet);
        }
        const plain = await runCli("search", ['"marble gateway"'], world.vars);
        assert.equal(plain.code, 0, plain.stderr);
        assert.match(
          plain.stdout.replace(/\s+/g, " "),
          /Why does the marble gateway still time out/,
        );
      });

      await t.step("an export holds the question whole, once", async () => {
        const md = await runCli("show", [SID, "--format", "md"], world.vars);
        assert.equal(md.code, 0, md.stderr);
        assert.equal(md.stdout.split("marble gateway").length, 2, md.stdout);
        assert.ok(md.stdout.replaceAll("\\", "").includes(QUESTION.replaceAll("\\", "")));
        assert.ok(!md.stdout.includes("iVBORw0KGgo"));
      });

      await t.step("the dashboard shows it as one user message", async () => {
        const { app } = appFor(world);
        const res = await request(app, `/conversations/${encodeURIComponent(ID)}`);
        assert.equal(res.status, 200);
        const html = unescapeHtml(await res.text());
        assert.equal(html.split('<span class="who">User</span>').length - 1, 2);
        assert.ok(html.includes(QUESTION), "the question whole");
      });
    } finally {
      await world.cleanup();
    }
  });
}
