// The commands' own argument parser gives node's `util.parseArgs` answers (strict, positionals
// allowed): the same values and positionals, or an error of the same kind.

import assert from "node:assert/strict";
import { parseArgs as nodeParseArgs, type ParseArgsOptionsConfig } from "node:util";
import { ArgsError, parseArgs } from "../../commands/_args.ts";

const OPTIONS = {
  help: { type: "boolean", short: "h" },
  json: { type: "boolean" },
  quiet: { type: "boolean", short: "q" },
  yes: { type: "boolean", short: "y" },
  output: { type: "string", short: "o" },
  limit: { type: "string" },
  "no-subagents": { type: "boolean" },
  project: { type: "string" },
} as const satisfies ParseArgsOptionsConfig;

/** Both parsers' answers in one comparable form. */
function answers(args: string[]): { node: string; ours: string } {
  const form = (run: () => { values: object; positionals: string[] }) => {
    try {
      const { values, positionals } = run();
      return JSON.stringify({ values: { ...values }, positionals });
    } catch (err) {
      return `error ${(err as { code?: string }).code}`;
    }
  };
  return {
    node: form(() =>
      nodeParseArgs({ args, options: OPTIONS, strict: true, allowPositionals: true })
    ),
    ours: form(() => parseArgs(args, OPTIONS)),
  };
}

const CASES: string[][] = [
  [],
  ["words", "to find"],
  ["--json"],
  ["--json=1"],
  ["--limit", "5"],
  ["--limit=5"],
  ["--limit="],
  ["--limit"],
  ["--limit", "-5"],
  ["--limit=-5"],
  ["-o", "file"],
  ["-ofile"],
  ["-o"],
  ["-o", "-q"],
  ["-qy"],
  ["-qo", "file"],
  ["-oq"],
  ["-o=v"],
  ["-q=v"],
  ["-x"],
  ["--nope"],
  ["--nope=1"],
  ["-"],
  ["--", "--json", "-q"],
  ["a", "--", "b"],
  ["-1"],
  ["--limit", "1", "--limit", "2"],
  ["--no-subagents"],
  ["-hq", "x"],
  ["--project", ""],
  ["--project", "--json"],
  ["---x"],
  ["--=x"],
  ["--__proto__"],
  ["--constructor"],
  ["--toString=1"],
];

Deno.test("parseArgs() answers as node's parseArgs does", async (t) => {
  for (const args of CASES) {
    await t.step(JSON.stringify(args), () => {
      const { node, ours } = answers(args);
      assert.equal(ours, node);
    });
  }
});

Deno.test("parseArgs() agrees with node's on 2,000 command lines made of the usual pieces", () => {
  const pieces = [
    "--json",
    "--json=x",
    "--limit",
    "--limit=3",
    "3",
    "-3",
    "-o",
    "-ofile",
    "-qy",
    "-h",
    "-z",
    "--",
    "-",
    "word",
    "--project",
    ".",
    "--no-subagents",
    "--bogus",
    "",
  ];
  // A fixed sequence, so a failure is the same on every run.
  let seed = 0x2f6b;
  const next = () => (seed = (seed * 1103515245 + 12345) >>> 0) % pieces.length;
  for (let i = 0; i < 2000; i++) {
    const args = Array.from({ length: 1 + (i % 6) }, () => pieces[next()]!);
    const { node, ours } = answers(args);
    assert.equal(ours, node, JSON.stringify(args));
  }
});

Deno.test("ArgsError names the option as it was written", () => {
  assert.throws(() => parseArgs(["-qz"], OPTIONS), (err) => {
    assert.ok(err instanceof ArgsError);
    assert.equal(err.code, "ERR_PARSE_ARGS_UNKNOWN_OPTION");
    assert.equal(err.option, "-z");
    return true;
  });
  assert.throws(() => parseArgs(["-o"], OPTIONS), (err) => {
    assert.ok(err instanceof ArgsError && err.option === "-o");
    return true;
  });
});
