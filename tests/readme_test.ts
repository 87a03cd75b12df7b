// The README and docs/ tell the truth: the usage blocks of docs/commands.md are each command's
// real `--help`, the README's first screen holds exactly the two commands a new user runs, its
// completion lines and docs/mcp.md's client snippets work, and every file and link they name is
// there.

import assert from "node:assert/strict";
import { join } from "node:path";
import { COMMANDS, main as logbook } from "../commands/logbook.ts";
import { isPresent } from "../lib/present.ts";
import { agentSpec, OTHER_AGENTS } from "../lib/agents.ts";
import { envFrom } from "../lib/env.ts";
import { RUN_ENV } from "../lib/run_flags.ts";
import { captureIo, childBaseEnv, removeDir, ROOT, taskFlags, tempDir } from "./_helpers.ts";

const README = Deno.readTextFileSync(join(ROOT, "README.md"));
/** The command reference, where every help block is. */
const COMMANDS_DOC = "docs/commands.md";

/** The `<!-- help:NAME -->` blocks of a Markdown text, by command name, in order. */
function helpBlocks(text: string): [string, string][] {
  return [...text.matchAll(/<!-- help:([a-z-]+) -->\s*```text\n([\s\S]*?)```/g)]
    .map((match) => [match[1]!, match[2]!]);
}

Deno.test("docs/commands.md's usage blocks match each command's --help exactly", async () => {
  const blocks = helpBlocks(Deno.readTextFileSync(join(ROOT, COMMANDS_DOC)));
  // `completions` belongs to the dispatcher, which writes its script from the commands' specs.
  const names = [...Object.keys(COMMANDS), "completions"];
  assert.deepEqual(blocks.map(([name]) => name).sort(), names.sort(), "one block per command");
  for (const [name, block] of blocks) {
    const io = captureIo();
    assert.equal(await logbook([name, "--help"], io), 0, io.stderr());
    assert.equal(block, io.stdout(), `${COMMANDS_DOC} block for ${name}`);
  }
});

Deno.test("help blocks live in docs/commands.md only, so none can drift unchecked", () => {
  for (const file of markdownFiles().filter((f) => f !== COMMANDS_DOC)) {
    const text = Deno.readTextFileSync(join(ROOT, file));
    assert.deepEqual(helpBlocks(text).map(([name]) => name), [], `help blocks in ${file}`);
  }
});

Deno.test("README's first screen shows exactly the start and test commands", () => {
  const first = /```sh\n([\s\S]*?)```/.exec(README);
  assert.ok(first, "a first shell block");
  const before = README.slice(0, first.index);
  assert.ok(before.split("\n").length < 12, "the block is on the first screen");
  const commands = first[1]!.split("\n").filter((l) => l.trim()).map((l) =>
    l.split("#")[0]!.trim()
  );
  assert.deepEqual(commands, ["deno task start", "deno task test"]);
});

/** The README's agent table as lib/agents.ts makes it: one row of cells per agent logbook reads. */
function agentRows(): string[][] {
  const home = envFrom({ HOME: "/HOME" });
  const code = (text: string) => `\`${text}\``;
  return OTHER_AGENTS.map((name) => {
    const spec = agentSpec(name);
    const roots = spec.roots(home).map((root) => code(root.replace(/^\/HOME/, "~")));
    if (spec.where) roots.push(spec.where);
    return [
      spec.display,
      code(name),
      roots.join(", "),
      spec.variable ? code(spec.variable) : "",
      code([spec.cli.command, ...spec.cli.resume("<id>")].join(" ")),
      spec.checked,
    ];
  });
}

Deno.test("README's agent table is lib/agents.ts's", () => {
  const table = /<!-- agents:[^\n]*-->\n([\s\S]*?)<!-- \/agents -->/.exec(README);
  assert.ok(table, "the agent table's markers");
  const rows = table[1]!.split("\n").filter((line) => line.startsWith("|")).map((line) =>
    line.slice(1, -1).split(" | ").map((cell) => cell.trim())
  );
  const expected = [
    ["agent", "`--agent`", "transcripts", "moved by", "resumed with", "checked against"],
    ...agentRows(),
  ];
  const render = (cells: string[][]) =>
    cells.map((row, i) =>
      `| ${row.join(" | ")} |` + (i === 0 ? `\n|${row.map(() => " --- |").join("")}` : "")
    ).join("\n");
  assert.deepEqual(
    rows.filter((row) => !row.every((cell) => /^-+$/.test(cell))),
    expected,
    `README.md's agent table should be (deno fmt aligns it):\n${render(expected)}\n`,
  );
});

Deno.test("README stays a newcomer's page: the reference is in docs/", () => {
  // About 200 lines: what logbook is, install, five commands, data, privacy, links (issue 32).
  const lines = README.split("\n").length;
  assert.ok(lines <= 220, `README.md has ${lines} lines: move the detail to docs/`);
});

Deno.test("README's completion lines install each shell's script in a fresh home", async () => {
  const block = /Tab completion of [\s\S]*?```sh\n([\s\S]*?)```/.exec(README);
  assert.ok(block, "the completions block");
  const home = await tempDir();
  try {
    // `logbook` as installed: the dispatcher with the permissions the install gives it.
    const logbook = [Deno.execPath(), "run", ...await taskFlags("logbook"), "--quiet"]
      .concat(join(ROOT, "commands", "logbook.ts")).map((w) => `'${w}'`).join(" ");
    const output = await new Deno.Command("bash", {
      args: ["-euc", `logbook() { ${logbook} "$@"; }\n${block[1]}`],
      env: { ...childBaseEnv(), HOME: home },
      clearEnv: true,
      stdin: "null",
    }).output();
    assert.equal(output.code, 0, new TextDecoder().decode(output.stderr));
    for (
      const [file, first] of [
        [".local/share/bash-completion/completions/logbook", "# bash completion"],
        [".zfunc/_logbook", "#compdef logbook"],
        [".config/fish/completions/logbook.fish", "# fish completion"],
      ]
    ) {
      assert.ok(Deno.readTextFileSync(join(home, file!)).startsWith(first!), file);
    }
  } finally {
    await removeDir(home);
  }
});

/** The lines of a TOML table as this README writes them: strings, arrays and inline tables. */
function parseTomlSubset(text: string): Record<string, Record<string, unknown>> {
  const tables: Record<string, Record<string, unknown>> = {};
  let table: Record<string, unknown> | null = null;
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (!line || line.startsWith("#")) continue;
    const header = /^\[([A-Za-z0-9_.-]+)\]$/.exec(line);
    if (header) {
      table = tables[header[1]!] = {};
      continue;
    }
    const pair = /^([A-Za-z0-9_-]+) = (.+)$/.exec(line);
    assert.ok(pair && table, `a TOML line this test reads: ${line}`);
    table[pair[1]!] = tomlValue(pair[2]!);
  }
  return tables;
}

/** A TOML value: a basic string, an array of them, or an inline table of them (as JSON). */
function tomlValue(text: string): unknown {
  const json = text.startsWith("{") ? text.replace(/([A-Za-z0-9_]+) = /g, '"$1": ') : text;
  return JSON.parse(json);
}

Deno.test("docs/mcp.md's client snippets start `logbook mcp` and parse", () => {
  const section = Deno.readTextFileSync(join(ROOT, "docs", "mcp.md"));
  assert.match(section, /`claude mcp add --scope user logbook -- logbook mcp`/);

  const toml = [...section.matchAll(/```toml\n([\s\S]*?)```/g)].map((m) => m[1]!);
  assert.equal(toml.length, 1, "one Codex snippet");
  const codex = parseTomlSubset(toml[0]!.replace(/^\s*# (env = )/m, "$1"));
  assert.deepEqual(codex["mcp_servers.logbook"], {
    command: "logbook",
    args: ["mcp"],
    env: { LOGBOOK_DATA_DIR: "/path/to/data" },
  });

  const json = [...section.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => JSON.parse(m[1]!));
  assert.equal(json.length, 2, "OpenCode's two shapes");
  const [v1, v2] = json;
  assert.deepEqual(v1.mcp.logbook, {
    type: "local",
    command: ["logbook", "mcp"],
    enabled: true,
  });
  assert.deepEqual(v2.mcp.servers.logbook, { type: "local", command: ["logbook", "mcp"] });

  // The fallback has the task's permissions (without --allow-net, `team` cannot connect).
  const flags = /`deno run ((?:-\S+ )+)\/path\/to\/logbook\/commands\/mcp\.ts`/.exec(section);
  assert.ok(flags, "the no-install command");
  const task = JSON.parse(Deno.readTextFileSync(join(ROOT, "deno.json"))).tasks.mcp as string;
  assert.equal(`${RUN_ENV} deno run ${flags[1]}commands/mcp.ts`, task);
});

/** The project's Markdown a reader is sent to: the README, its neighbours and docs/. */
function markdownFiles(): string[] {
  const docs = [...Deno.readDirSync(join(ROOT, "docs"))]
    .filter((entry) => entry.isFile && entry.name.endsWith(".md"))
    .map((entry) => `docs/${entry.name}`);
  return ["README.md", "ARCHITECTURE.md", "SECURITY.md", ...docs.sort()];
}

/** A Markdown text without its fenced code blocks (their `#` lines are not headings). */
function withoutFences(text: string): string {
  return text.replace(/^( *)```[^\n]*\n[\s\S]*?^\1```$/gm, "");
}

/** The anchors GitHub makes of a text's headings: `## Where your data lives` is `where-your-data-lives`. */
function anchors(text: string): Set<string> {
  return new Set(
    [...withoutFences(text).matchAll(/^#{1,6} (.+)$/gm)].map((m) =>
      m[1]!.trim().toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, "").replaceAll(" ", "-")
    ),
  );
}

Deno.test("every link between the README, ARCHITECTURE.md and docs/ reaches a file and heading", () => {
  for (const file of markdownFiles()) {
    const text = withoutFences(Deno.readTextFileSync(join(ROOT, file)));
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^(https?|mailto):/.test(target!)) continue;
      const [path, anchor] = target!.split("#");
      const linked = path ? join(ROOT, file, "..", path) : join(ROOT, file);
      assert.ok(isPresent(linked), `${file} links to ${target}, which is not there`);
      if (anchor === undefined) continue;
      assert.ok(
        anchors(Deno.readTextFileSync(linked)).has(anchor),
        `${file} links to ${target}: no such heading`,
      );
    }
  }
});

Deno.test("every project path the README, ARCHITECTURE.md and docs/ name exists", () => {
  const named = /`((?:bench|commands|docs|fixtures|lib|servers|tests)\/[^`\s<>*…]*)`/g;
  for (const file of markdownFiles()) {
    const text = Deno.readTextFileSync(join(ROOT, file));
    for (const [, path] of text.matchAll(named)) {
      assert.ok(isPresent(join(ROOT, path!)), `${file} names ${path}, which is not there`);
    }
  }
});
