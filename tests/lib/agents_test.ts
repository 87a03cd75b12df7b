// The agent registry holds together: every entry's adapters are its agent's and match its readers,
// its variable moves its roots, its conformance pin has a driver, its demo has fixtures, and a
// picker row of it resumes and forks with its own CLI.

import assert from "node:assert/strict";
import { join } from "node:path";
import { AGENT_SPECS, AGENTS, loadAdapters, READERS } from "../../lib/agents.ts";
import { envFrom } from "../../lib/env.ts";
import { nativeCommand, nativeForkCommand, type PickerRow } from "../../lib/sessions/resume.ts";
import { FIXTURES, ROOT } from "../_helpers.ts";

Deno.test("each agent's adapters are its own, one reader each, in the readers' order", async () => {
  assert.equal(new Set(AGENTS).size, AGENTS.length, "names are unique");
  for (const name of AGENTS) assert.match(name, /^[a-z][a-z0-9]*$/);
  const adapters = await loadAdapters();
  assert.deepEqual(adapters.map((a) => a.agent), READERS.map((r) => r.agent));
  for (const spec of AGENT_SPECS) {
    const own = await spec.adapters();
    assert.ok(own.length > 0, `${spec.name} has an adapter`);
    assert.equal(own.length, spec.readers.length, `${spec.name}: one reader per adapter`);
    for (const adapter of own) assert.equal(adapter.agent, spec.name);
    for (const reader of spec.readers) assert.equal(reader.agent, spec.name);
    // The first claims nothing: it reads the agent's transcripts.
    assert.equal(own[0]!.claims, undefined, `${spec.name}'s first adapter claims nothing`);
  }
});

Deno.test("an agent's variable moves its default roots; without a home there are none", () => {
  for (const spec of AGENT_SPECS) {
    const plain = spec.roots(envFrom({ HOME: "/home/u" }));
    for (const root of plain) assert.ok(root.startsWith("/home/u/"), `${spec.name}: ${root}`);
    assert.deepEqual(spec.roots(envFrom({})), [], `${spec.name} without a home`);
    if (spec.variable === null || spec.name === "logbook") continue;
    const moved = spec.roots(envFrom({ HOME: "/home/u", [spec.variable]: "/elsewhere" }));
    assert.ok(moved.some((root) => root.startsWith("/elsewhere")), `${spec.name}: ${moved}`);
  }
});

Deno.test("every pinned agent has a conformance driver and every demo folder exists", () => {
  for (const spec of AGENT_SPECS) {
    if (spec.conformance !== null) {
      const driver = join(ROOT, "tests", "conformance", "drivers", `${spec.name}.ts`);
      assert.ok(Deno.statSync(driver).isFile, `${spec.name}'s driver`);
    }
    for (const folder of Object.values(spec.demo)) {
      assert.ok(Deno.statSync(join(FIXTURES, folder)).isDirectory, `${spec.name}'s demo`);
    }
  }
});

Deno.test("a row of each agent resumes and forks with the agent's own program", () => {
  for (const spec of AGENT_SPECS) {
    const row: PickerRow = {
      key: `${spec.name}:abc`,
      agent: spec.name,
      nativeId: "abc",
      title: "t",
      updatedAt: 0,
      size: 0,
      messages: 0,
      cwd: "/work",
      manifest: false,
    };
    const resume = nativeCommand(row, "/elsewhere");
    assert.equal(resume.command, spec.cli.command);
    assert.deepEqual(resume.args, spec.cli.resume("abc"));
    // An agent without ids (Aider restores its project's history) resumes in the directory.
    const byId = spec.cli.resume("abc").join(" ") !== spec.cli.resume("xyz").join(" ");
    if (byId) assert.ok(resume.args.includes("abc"), `${spec.name} resumes the id`);
    assert.equal(resume.cwd, "/work");
    const fork = nativeForkCommand(row, "/elsewhere");
    if (spec.cli.fork("abc") === null) assert.equal(fork, null);
    else assert.deepEqual(fork?.args, spec.cli.fork("abc"));
  }
  const unknown = { key: "martian:1", agent: "martian", nativeId: "1" } as PickerRow;
  assert.throws(
    () => nativeCommand(unknown, "/"),
    /this version of logbook does not know the agent "martian"/,
  );
});
