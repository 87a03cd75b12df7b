// The README tells the truth: its usage blocks are each command's real `--help`, and its first
// screen holds exactly the two commands a new user runs.

import assert from "node:assert/strict";
import { join } from "node:path";
import { COMMANDS, main as logbook } from "../commands/logbook.ts";
import { captureIo, childBaseEnv, removeDir, ROOT, taskFlags, tempDir } from "./_helpers.ts";

const README = Deno.readTextFileSync(join(ROOT, "README.md"));

Deno.test("README usage blocks match each command's --help exactly", async () => {
  const blocks = new Map<string, string>();
  for (const match of README.matchAll(/<!-- help:([a-z-]+) -->\s*```text\n([\s\S]*?)```/g)) {
    blocks.set(match[1]!, match[2]!);
  }
  // `completions` belongs to the dispatcher, which writes its script from the commands' specs.
  const names = [...Object.keys(COMMANDS), "completions"];
  assert.deepEqual([...blocks.keys()].sort(), names.sort());
  for (const name of names) {
    const io = captureIo();
    assert.equal(await logbook([name, "--help"], io), 0, io.stderr());
    assert.equal(blocks.get(name), io.stdout(), `README block for ${name}`);
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

Deno.test("README's MCP client snippets start `logbook mcp` and parse", () => {
  const section = README.slice(README.indexOf("### mcp\n"), README.indexOf("### mirror\n"));
  assert.ok(section.length > 100, "an mcp section");
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
  assert.equal(`deno run ${flags[1]}commands/mcp.ts`, task);
});
