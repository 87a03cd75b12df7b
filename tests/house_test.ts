// The house rules, read from every .ts file's imports: what each folder may import, and that the
// library never talks to a terminal. Each rule is a step that names every file breaking it.
//
// How a rule reads an import: a file or folder whose name starts with `_` is private to the
// folder that holds it (and that folder's subfolders). A test counts as sitting in the folder
// it mirrors (`tests/lib/store/x_test.ts` in `lib/store/`), so it may test that folder's private
// files as a test beside them would, and no other folder's; test helpers (`tests/**/_*.ts`) are
// shared by every test.

import assert from "node:assert/strict";
import { dirname, join, relative, sep } from "node:path";
import { ROOT } from "./_helpers.ts";

/** Folders the rules do not read: generated output and input data. */
const SKIP = new Set(["dist", "fixtures", "node_modules", ".git", "artifacts"]);

/** Every .ts file of the project, as a path relative to the root with `/` separators. */
function sourceFiles(dir = ROOT): string[] {
  const files: string[] = [];
  for (const entry of Deno.readDirSync(dir)) {
    if (SKIP.has(entry.name) || entry.name.startsWith(".")) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory) files.push(...sourceFiles(path));
    else if (entry.isFile && entry.name.endsWith(".ts")) files.push(posix(relative(ROOT, path)));
  }
  return files.sort();
}

function posix(path: string): string {
  return path.split(sep).join("/");
}

/** One import of a file: where it points (relative to the root) and how it was written. */
interface Import {
  from: string;
  to: string;
  /** `import("…")`, loaded when called rather than with the module. */
  dynamic: boolean;
}

const STATIC = /^\s*(?:import|export)\b[^;]*?\bfrom\s*["']([^"']+)["']/gm;
const BARE = /^\s*import\s*["']([^"']+)["']/gm;
const DYNAMIC = /\bimport\(\s*["']([^"']+)["']\s*\)/g;
// Workers and scripts a module starts by URL are imports too.
const URL_REF = /new URL\(\s*["']([^"']+\.ts)["']\s*,\s*import\.meta\.url\s*\)/g;

/** The project-relative imports of `file` (packages and `node:` built-ins left out). */
function importsOf(file: string, text: string): Import[] {
  const found: Import[] = [];
  const add = (specifier: string, dynamic: boolean) => {
    if (!specifier.startsWith(".")) return;
    found.push({ from: file, to: posix(join(dirname(file), specifier)), dynamic });
  };
  for (const re of [STATIC, BARE, URL_REF]) {
    for (const m of text.matchAll(re)) add(m[1]!, false);
  }
  for (const m of text.matchAll(DYNAMIC)) add(m[1]!, true);
  return found;
}

/** The lines of `text` that are code: comment lines and trailing ` // …` comments dropped. */
function codeLines(text: string): { line: number; code: string }[] {
  const lines: { line: number; code: string }[] = [];
  let inBlock = false;
  text.split("\n").forEach((raw, i) => {
    const trimmed = raw.trim();
    if (inBlock) {
      if (trimmed.includes("*/")) inBlock = false;
      return;
    }
    if (trimmed.startsWith("/*")) {
      inBlock = !trimmed.includes("*/");
      return;
    }
    if (trimmed.startsWith("//") || trimmed.startsWith("*")) return;
    lines.push({ line: i + 1, code: raw.replace(/\s\/\/\s.*$/, "") });
  });
  return lines;
}

/** The folder a test counts as sitting in: the one it mirrors (`tests/lib/x_test.ts` → `lib`). */
function seatOf(file: string): string {
  const dir = posix(dirname(file));
  if (dir === "tests") return ".";
  return dir.startsWith("tests/") ? dir.slice("tests/".length) : dir;
}

function inside(dir: string, folder: string): boolean {
  return folder === "." || dir === folder || dir.startsWith(`${folder}/`);
}

/**
 * Why `imp` reaches a private file from outside its folder, or null when it may: the first
 * `_` name on the target's path whose folder does not hold the importer.
 */
function privateBreach(imp: Import): string | null {
  const fromTests = imp.from.startsWith("tests/");
  if (fromTests && imp.to.startsWith("tests/")) return null;
  const seat = fromTests ? seatOf(imp.from) : posix(dirname(imp.from));
  const parts = imp.to.split("/");
  for (let i = 0; i < parts.length; i++) {
    if (!parts[i]!.startsWith("_")) continue;
    const owner = parts.slice(0, i).join("/") || ".";
    if (!inside(seat, owner)) return `${imp.from} imports ${imp.to}, private to ${owner}/`;
  }
  return null;
}

/** A command: a file directly in `commands/` whose name does not start with `_`. */
function isCommand(file: string): boolean {
  return /^commands\/[^_/][^/]*\.ts$/.test(file);
}

const FILES = sourceFiles();
const TEXTS = new Map(FILES.map((file) => [file, Deno.readTextFileSync(join(ROOT, file))]));
const IMPORTS = FILES.flatMap((file) => importsOf(file, TEXTS.get(file)!));

/** Asserts that `breaches` is empty, naming each one. */
function none(breaches: string[], rule: string): void {
  assert.deepEqual(breaches, [], `${rule}:\n  ${breaches.join("\n  ")}`);
}

Deno.test("the house rules hold for every .ts file", async (t) => {
  await t.step("the rules read the imports they are about", () => {
    // A reader that found nothing would let every rule pass: these imports exist.
    const seen = (from: string, to: string) => IMPORTS.some((i) => i.from === from && i.to === to);
    assert.ok(seen("commands/_body/search.ts", "lib/store/search.ts"));
    assert.ok(seen("commands/_body/search.ts", "commands/_command.ts"));
    assert.ok(IMPORTS.some((i) => i.from === "commands/logbook.ts" && i.dynamic));
    assert.ok(seen("lib/store/search_workers.ts", "lib/store/_search_worker.ts"), "a worker URL");
    assert.ok(FILES.length > 100, `only ${FILES.length} files found`);
  });

  await t.step("no file imports a `_` file from outside its folder", () => {
    none(IMPORTS.map(privateBreach).filter((b) => b !== null), "private files reached");
  });

  await t.step("lib/ imports neither commands/ nor servers/", () => {
    none(
      IMPORTS.filter((i) => i.from.startsWith("lib/"))
        .filter((i) => i.to.startsWith("commands/") || i.to.startsWith("servers/"))
        .map((i) => `${i.from} imports ${i.to}`),
      "lib/ reaching up",
    );
  });

  await t.step("no command imports another command (the dispatcher only loads them)", () => {
    none(
      IMPORTS.filter((i) => isCommand(i.from) && isCommand(i.to))
        .filter((i) => !(i.from === "commands/logbook.ts" && i.dynamic))
        .map((i) => `${i.from} imports ${i.to}`),
      "commands importing commands",
    );
  });

  await t.step(
    "lib/sources/ imports neither the capture engine nor the store's private files",
    () => {
      none(
        IMPORTS.filter((i) => i.from.startsWith("lib/sources/"))
          .filter((i) => i.to.startsWith("lib/capture") || /^lib\/store\/_/.test(i.to))
          .map((i) => `${i.from} imports ${i.to}`),
        "adapters reaching into capture or the store",
      );
    },
  );

  await t.step("lib/, commands/ and servers/ take path functions from lib/path.ts", () => {
    // node:path costs every command ~9 ms of Node set-up; lib/path.ts gives the same answers.
    const nodePath = /^\s*(?:import|export)\b[^;]*?\bfrom\s*["']node:path(?:\/\w+)?["']/m;
    none(
      FILES.filter((f) => /^(lib|commands|servers)\//.test(f) && f !== "lib/path.ts")
        .filter((f) => nodePath.test(TEXTS.get(f)!.replace(/^\s*import type\b.*$/gm, ""))),
      "node:path imported",
    );
    assert.ok(nodePath.test(TEXTS.get("tests/house_test.ts")!), "the rule reads node:path imports");
  });

  await t.step("lib/ never writes to stdout or stderr, reads stdin, exits or logs", () => {
    const terminal = /\bDeno\.(stdout|stderr|stdin|exit)\b|\bconsole\./;
    const breaches: string[] = [];
    for (const file of FILES.filter((f) => f.startsWith("lib/"))) {
      for (const { line, code } of codeLines(TEXTS.get(file)!)) {
        const m = terminal.exec(code);
        if (m) breaches.push(`${file}:${line}: ${m[0]}`);
      }
    }
    none(breaches, "lib/ talking to a terminal");
  });
});

Deno.test("the house rules' reader sees what it must, and not what it must not", () => {
  const text = [
    'import { a } from "./_a.ts";',
    'import type {\n  B,\n} from "../b/_b.ts";',
    'export { c } from "./c.ts";',
    'const d = await import("./d.ts");',
    'new Worker(new URL("./_w.ts", import.meta.url).href);',
    'import { z } from "zod";',
    '// import { e } from "./_e.ts";',
    '/**\n * import { f } from "./_f.ts";\n */',
  ].join("\n");
  assert.deepEqual(importsOf("lib/x/y.ts", text), [
    { from: "lib/x/y.ts", to: "lib/x/_a.ts", dynamic: false },
    { from: "lib/x/y.ts", to: "lib/b/_b.ts", dynamic: false },
    { from: "lib/x/y.ts", to: "lib/x/c.ts", dynamic: false },
    { from: "lib/x/y.ts", to: "lib/x/_w.ts", dynamic: false },
    { from: "lib/x/y.ts", to: "lib/x/d.ts", dynamic: true },
  ]);
  const breach = (from: string, to: string) => privateBreach({ from, to, dynamic: false });
  assert.equal(breach("lib/store/search.ts", "lib/store/_text.ts"), null);
  assert.equal(breach("servers/api/search.ts", "servers/_deps.ts"), null, "a subfolder may");
  assert.equal(breach("commands/search.ts", "commands/_terminal/io.ts"), null);
  assert.match(breach("commands/search.ts", "lib/store/_text.ts")!, /private to lib\/store\//);
  assert.match(breach("servers/app.ts", "servers/pages/_x.ts")!, /private to servers\/pages\//);
  assert.equal(breach("tests/lib/store/x_test.ts", "lib/store/_text.ts"), null, "its mirror");
  assert.equal(breach("tests/commands/_terminal/x_test.ts", "commands/_terminal/io.ts"), null);
  assert.match(breach("tests/servers/x_test.ts", "lib/store/_text.ts")!, /private to lib\/store/);
  assert.equal(breach("tests/lib/store/x_test.ts", "tests/servers/_dashboard.ts"), null);
  assert.deepEqual(
    codeLines("a();\n// Deno.exit(1)\n  * console.log\nb(); // console.log(x)\n/* Deno.stdout\n*/")
      .map((l) => l.code),
    ["a();", "b();"],
  );
});

Deno.test("deno.json names only the npm packages logbook itself imports, and start runs Deno quietly", () => {
  // `deno task` downloads every package deno.json and deno.lock hold before it runs any task, so
  // a package only a test imports would be a user's download on the first `deno task start`.
  const config = JSON.parse(Deno.readTextFileSync(join(ROOT, "deno.json")));
  const product = FILES.filter((f) => /^(commands|lib|servers)\//.test(f));
  const specifiers = new Set<string>();
  for (const file of product) {
    const text = TEXTS.get(file)!;
    for (const re of [STATIC, BARE, DYNAMIC]) {
      for (const m of text.matchAll(re)) specifiers.add(m[1]!);
    }
  }
  const unused = Object.keys(config.imports).filter((name) => {
    const bare = name.replace(/\/$/, "");
    return ![...specifiers].some((s) => s === bare || s.startsWith(`${bare}/`));
  });
  none(unused, "deno.json imports that only tests (or nothing) use");
  const runs = (config.tasks.start as string).split(";").map((run) => run.trim());
  none(
    // After the variables a run sets (lib/run_flags.ts RUN_ENV).
    runs.filter((run) => !run.replace(/^(\w+=\S+ )*/, "").startsWith("deno run --quiet ")),
    "start's deno runs that would print Deno's download lines",
  );
});
