// The commands' shared opening: `run` (help, usage errors, exit codes), the options declared
// once, and `wholeNumber`, the one check every numeric option goes through.

import assert from "node:assert/strict";
import {
  defineCommand,
  didYouMean,
  helpText,
  invalidOption,
  run,
  runCommand,
  shared,
  UsageError,
  usageLine,
  wholeNumber,
} from "../../commands/_command.ts";
import { join } from "node:path";
import { permissions as bundlePermissions } from "../../commands/_bundle.ts";
import { COMMANDS } from "../../commands/logbook.ts";
import type { Io } from "../../commands/_terminal/io.ts";
import { RUN_ENV, runFlags } from "../../lib/run_flags.ts";
import { captureIo, ROOT, taskFlags } from "../_helpers.ts";

Deno.test("wholeNumber() takes decimal digits within range and nothing else", () => {
  assert.equal(wholeNumber(undefined, "tail"), undefined);
  assert.equal(wholeNumber("20", "tail"), 20);
  assert.equal(wholeNumber("007", "tail"), 7);
  assert.equal(wholeNumber("9007199254740991", "tail"), Number.MAX_SAFE_INTEGER);
  assert.equal(wholeNumber("0", "after", { min: 0 }), 0);
  assert.equal(wholeNumber("1000", "limit", { max: 1000 }), 1000);
  for (
    const value of [
      "0",
      "",
      " 5",
      "5 ",
      "-1",
      "+1",
      "1e3",
      "0x10",
      "1.5",
      "1_000",
      "Infinity",
      "9007199254740992",
      "999999999999999999999",
    ]
  ) {
    assert.throws(() => wholeNumber(value, "tail"), UsageError, JSON.stringify(value));
  }
  assert.throws(() => wholeNumber("1001", "limit", { max: 1000 }), UsageError);
});

Deno.test("wholeNumber() names the option, the range and the value it refuses", () => {
  const message = (value: string, range?: Parameters<typeof wholeNumber>[2]) => {
    try {
      wholeNumber(value, "opt", range);
    } catch (err) {
      return (err as Error).message;
    }
    return "";
  };
  assert.equal(message("x"), 'Option "--opt" expects a positive whole number, got "x"');
  assert.equal(message("x", { min: 0 }), 'Option "--opt" expects a whole number, got "x"');
  assert.equal(
    message("1", { min: 2 }),
    'Option "--opt" expects a whole number of at least 2, got "1"',
  );
  assert.equal(
    message("99999", { min: 0, max: 65535, what: "port number" }),
    'Option "--opt" expects a port number from 0 to 65535, got "99999"',
  );
});

Deno.test("runCommand() points a damaged store at status --check", async () => {
  let err = "";
  const io: Io = {
    out: () => {},
    outBytes: () => {},
    err: (text) => err += text,
    color: false,
    errIsTerminal: false,
    outIsTerminal: false,
  };
  const code = await runCommand("show", io, () => {
    throw new Error("database disk image is malformed");
  });
  assert.equal(code, 1);
  assert.match(err, /^error: database disk image is malformed$/m);
  assert.match(err, /run "logbook status --check" to see what and how to recover/);
});

Deno.test("run() answers --help, turns a bad flag into exit 2, and runs the body otherwise", async () => {
  const spec = defineCommand({
    name: "frob",
    summary: "frobnicate things",
    options: {
      ...shared({ json: "print JSON" }),
      level: { type: "string", value: "N", help: "how hard" },
    },
    helpNote: "show this help (and nothing else)",
    examples: ["logbook frob --level 2"],
    maxPositionals: 0,
    permissions: {},
  });
  assert.deepEqual(Object.keys(spec.options).sort(), ["help", "json", "level"]);
  const calls: unknown[] = [];
  const body = ({ values }: { values: { json?: boolean; level?: string } }) => {
    calls.push({ ...values });
    return 0;
  };

  const help = captureIo();
  assert.equal(await run(spec, ["--help", "--json"], help, body), 0);
  assert.equal(help.stdout(), helpText(spec));
  assert.match(help.stdout(), /^ {2}-h, --help {2}show this help \(and nothing else\)$/m);
  assert.deepEqual(calls, []);

  const bad = captureIo();
  assert.equal(await run(spec, ["--loud"], bad, body), 2);
  assert.match(bad.stderr(), /^error: .*--loud.*\nRun "logbook frob --help" for usage\.\n$/);
  assert.equal(await run(spec, ["extra"], captureIo(), body), 2);

  assert.equal(await run(spec, ["--json", "--level", "3"], captureIo(), body), 0);
  assert.deepEqual(calls, [{ json: true, level: "3" }]);
});

Deno.test("shared() spreads the options several commands declare once, with this command's help", () => {
  assert.deepEqual(shared({ json: "print JSON", project: "only this project" }), {
    json: { type: "boolean", help: "print JSON" },
    project: { type: "string", value: "DIR", help: "only this project" },
  });
});

Deno.test("usageLine() writes each option once, in brackets, in the order declared", () => {
  const spec = defineCommand({
    name: "frob",
    summary: "frobnicate",
    arguments: "<thing>",
    options: {
      interactive: { type: "boolean", short: "i", shortInUsage: true, help: "live" },
      quiet: { type: "boolean", short: "q", help: "say nothing" },
      ...shared({ project: "only this project" }),
      "all-projects": { type: "boolean", or: "project", help: "every project" },
      sort: { type: "string", value: "S", choices: ["new", "old"], help: "order" },
      output: { type: "string", short: "o", value: "FILE", shortInUsage: true, help: "write" },
      local: { type: "boolean", help: "here" },
      team: { type: "boolean", or: "local", help: "there" },
      machine: { type: "string", value: "M", within: "team", help: "whose" },
    },
    examples: ["logbook frob x"],
    permissions: {},
  });
  assert.equal(
    usageLine(spec),
    "logbook frob <thing> [-i|--interactive] [--quiet] [--project DIR|--all-projects] " +
      "[--sort new|old] [-o FILE] [--local|--team [--machine M]]",
  );
  const help = helpText(spec);
  assert.match(help, /^ {2}--sort S {2,}order$/m, "help names the value, not the choices");
  assert.match(help, /^ {2}-o, --output FILE {2,}write$/m);
});

Deno.test("every command's usage line names each of its options", async () => {
  for (const [name, load] of Object.entries(COMMANDS)) {
    const { spec } = await load();
    const help = helpText(spec);
    const usage = help.slice(help.indexOf("Usage: "), help.indexOf("\nOptions:"));
    for (const [option, { short }] of Object.entries(spec.options)) {
      if (option === "help") continue;
      const written = new RegExp(`(?<![\\w-])(--${option}|-${short ?? "--"})(?![\\w-])`);
      assert.match(usage, written, `${name}'s usage line leaves out --${option}`);
    }
  }
});

Deno.test("didYouMean() guesses a close candidate and nothing from far away", () => {
  const commands = ["search", "show", "status", "start", "stage-markers", "delete-user-data"];
  assert.equal(didYouMean("serch", commands), "search");
  assert.equal(didYouMean("stauts", commands), "status");
  assert.equal(didYouMean("delete", commands), "delete-user-data");
  assert.equal(didYouMean("frobnicate", commands), undefined);
  assert.equal(didYouMean("--lmit", ["--limit", "--json"]), "--limit");
  assert.equal(didYouMean("--jsno", ["--limit", "--json"]), "--json");
  assert.equal(didYouMean("--x", ["--limit", "--json"]), undefined);
});

Deno.test("parse errors are plain sentences naming the option, with a guess for a typo", async () => {
  const spec = defineCommand({
    name: "frob",
    summary: "frobnicate",
    options: {
      limit: { type: "string", value: "N", help: "at most N" },
      json: { type: "boolean", help: "JSON" },
    },
    examples: ["logbook frob"],
    maxPositionals: 0,
    permissions: {},
  });
  const said = async (args: string[]) => {
    const io = captureIo();
    assert.equal(await run(spec, args, io, () => 0), 2);
    return io.stderr().split("\n")[0];
  };
  assert.equal(
    await said(["--lmit", "3"]),
    'error: Unknown option "--lmit": did you mean "--limit"?',
  );
  assert.equal(await said(["--zzz"]), 'error: Unknown option "--zzz"');
  assert.equal(await said(["--limit"]), 'error: Option "--limit" needs a value');
  assert.equal(await said(["--json=yes"]), 'error: Option "--json" takes no value');
  assert.equal(
    await said(["extra"]),
    'error: Unexpected argument "extra": this command takes options only',
  );
});

Deno.test("invalidOption() says what the option takes and what it got", () => {
  assert.equal(
    invalidOption("agent", "claud", { message: "", expected: "claude or codex" }).message,
    'Option "--agent" expects claude or codex, got "claud"',
  );
  assert.equal(
    invalidOption("since", "soon", { message: "cannot read the time" }).message,
    'Invalid value for "--since": cannot read the time',
  );
});

Deno.test("helpText() wraps long rows to fit 80 columns, continuing under the description", () => {
  const spec = defineCommand({
    name: "frob",
    summary: "frobnicate",
    options: { level: { type: "string", value: "N", help: "word ".repeat(30).trim() } },
    examples: ["logbook frob"],
    permissions: {},
  });
  const lines = helpText(spec).split("\n");
  assert.ok(lines.every((line) => line.length <= 80), lines.join("\n"));
  const at = lines.findIndex((line) => line.startsWith("  --level N"));
  assert.match(lines[at + 1]!, /^ {14}word/);
});

Deno.test("a command run without the environment access its task grants fails in one line, exit 1", async () => {
  // `deno run -R commands/show.ts` without -E: reading the environment fails, and so would asking
  // for LOGBOOK_DEBUG while reporting it. Without -R either, loading the command fails first.
  const show = new URL("../../commands/show.ts", import.meta.url).pathname;
  for (
    const [flags, access] of [[["-R"], "env"], [[], "read"]] as const
  ) {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--no-prompt", ...flags, show, "x"],
      env: { LOGBOOK_SOURCES: "1" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stderr = new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 1, stderr);
    assert.match(
      stderr,
      new RegExp(
        `^error: Requires ${access} access to "[^"]+", run again with the --allow-${access} flag\n$`,
      ),
    );
  }
});

Deno.test("stopSignals(): after a stop, a second Ctrl-C (deno task's copy) finds it still listening", async () => {
  // The script stops on its first SIGINT, releases, and gets the copy after its clean-up; the
  // SIGUSR1 it sends itself next arrives after that copy was taken. Without a stop first,
  // release gives Ctrl-C back to the system, which ends the process.
  const script = (stopFirst: boolean) => `
    import { stopSignals } from ${
    JSON.stringify(new URL("../../commands/_command.ts", import.meta.url).href)
  };
    const stop = stopSignals();
    if (${stopFirst}) {
      Deno.kill(Deno.pid, "SIGINT");
      await new Promise((resolve) => stop.signal.addEventListener("abort", resolve));
    }
    stop.release();
    const after = new Promise((resolve) => Deno.addSignalListener("SIGUSR1", resolve));
    Deno.kill(Deno.pid, "SIGINT");
    Deno.kill(Deno.pid, "SIGUSR1");
    await after;
    console.log("exited by itself");
    Deno.exit(0);
  `;
  for (const stopFirst of [true, false]) {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["eval", "--ext=ts", script(stopFirst)],
      stdout: "piped",
      stderr: "piped",
    }).output();
    const said = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
    if (stopFirst) {
      assert.equal(out.code, 0, said);
      assert.equal(said, "exited by itself\n");
    } else {
      assert.equal(out.signal, "SIGINT", `${out.code} ${said}`);
    }
  }
});

/** Every command's file by name, the dispatcher's too. */
const FILES: Record<string, string> = {
  ...Object.fromEntries(
    Object.keys(COMMANDS).map((name) => [name, `commands/${name.replaceAll("-", "_")}.ts`]),
  ),
  logbook: "commands/logbook.ts",
};

Deno.test("deno.json's tasks, the shebangs, the compile task and the install line grant what the specs declare", async (t) => {
  const tasks = JSON.parse(Deno.readTextFileSync(join(ROOT, "deno.json"))).tasks as Record<
    string,
    string
  >;
  const flags = new Map<string, string>();
  for (const name of Object.keys(FILES)) flags.set(name, (await taskFlags(name)).join(" "));

  await t.step("each command's task runs its file with them", () => {
    for (const [name, file] of Object.entries(FILES)) {
      const run = `${RUN_ENV} deno run ${flags.get(name)} ${file}`;
      // start builds search's and show's bundles first when they are stale, saying nothing.
      const bundle = `deno run --quiet ${runFlags(bundlePermissions).join(" ")} ` +
        "commands/_bundle.ts --if-stale --quiet";
      const expected = name === "start"
        ? `${bundle}; ${run.replace("deno run", "$& --quiet")}`
        : run;
      assert.equal(tasks[name], expected, `deno.json's "${name}" task`);
    }
    assert.equal(
      tasks.bundle,
      `deno run ${runFlags(bundlePermissions).join(" ")} commands/_bundle.ts`,
    );
  });

  await t.step("each command's shebang runs it with them", () => {
    for (const [name, file] of Object.entries(FILES)) {
      const first = Deno.readTextFileSync(join(ROOT, file)).split("\n")[0];
      assert.equal(first, `#!/usr/bin/env -S deno run ${flags.get(name)}`, file);
    }
  });

  await t.step(
    "the compile task builds each command with them and what it must embed",
    async () => {
      const specs = await Promise.all(
        Object.entries(COMMANDS).map(async ([name, load]) => ({ name, spec: (await load()).spec })),
      );
      const embeds = new Map(specs.map(({ name, spec }) => [name, spec.embed ?? []]));
      embeds.set("logbook", [...new Set(specs.flatMap(({ spec }) => spec.embed ?? []))]);
      const builds = Object.entries(FILES).map(([name, file]) =>
        [
          `deno compile ${flags.get(name)}`,
          ...embeds.get(name)!.map((path) => `--include ${path}`),
          `-o dist/${name} ${file}`,
        ].join(" ")
      );
      assert.equal(tasks.compile, builds.join(" && "));
    },
  );

  await t.step("the README's install line gives logbook them", () => {
    // The one `deno install -g` command, its continued lines joined.
    const lines = Deno.readTextFileSync(join(ROOT, "README.md")).split("\n");
    let at = lines.findIndex((line) => line.startsWith("deno install -g "));
    assert.ok(at >= 0, "an install line");
    let command = lines[at]!;
    while (command.endsWith("\\")) command = `${command.slice(0, -1)} ${lines[++at]}`;
    const words = command.split(/\s+/);
    const granted = words.filter((word) => /^(-[RWE]|--allow-|--v8-flags=)/.test(word));
    assert.equal(granted.join(" "), flags.get("logbook"));
    assert.ok(words.at(-1)!.endsWith("/commands/logbook.ts"), words.at(-1));
  });
});
