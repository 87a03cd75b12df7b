// Tests for lib/config.ts: precedence, merging, validation messages and path resolution, on real
// config files in a fresh temp dir.

import { OTHER_AGENTS } from "../../lib/agents.ts";
import assert from "node:assert/strict";
import { join } from "node:path";
import { ConfigError, DEFAULTS, loadConfig, type LoadConfigOptions } from "../../lib/config.ts";
import { envFrom } from "../../lib/env.ts";

interface Dirs {
  home: string;
  configDir: string;
  projectRoot: string;
  globalFile: string;
  projectFile: string;
}

/** Runs `fn` with a fresh temp dir laid out as a home, a config dir and a project root. */
function withDirs(fn: (dirs: Dirs) => void): void {
  const tmp = Deno.realPathSync(Deno.makeTempDirSync({ prefix: "logbook-config-" }));
  try {
    const home = join(tmp, "home");
    const configDir = join(home, ".config", "logbook");
    const projectRoot = join(tmp, "project");
    Deno.mkdirSync(home);
    Deno.mkdirSync(projectRoot);
    fn({
      home,
      configDir,
      projectRoot,
      globalFile: join(configDir, "config.json"),
      projectFile: join(projectRoot, ".logbook", "config.json"),
    });
  } finally {
    Deno.removeSync(tmp, { recursive: true });
  }
}

function write(file: string, content: unknown): void {
  Deno.mkdirSync(join(file, ".."), { recursive: true });
  Deno.writeTextFileSync(file, typeof content === "string" ? content : JSON.stringify(content));
}

function options(dirs: Dirs, env: Record<string, string> = {}): LoadConfigOptions {
  return {
    env: envFrom({ HOME: dirs.home, ...env }),
    configDir: dirs.configDir,
    projectRoot: dirs.projectRoot,
    agent: "codex",
  };
}

/** Asserts that `fn` throws a ConfigError with exactly `message`, and returns it. */
function throwsConfigError(fn: () => unknown, message: string): ConfigError {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof ConfigError, `expected a ConfigError, got ${err}`);
    assert.equal(err.message, message);
    assert.equal(err.name, "ConfigError");
    return err;
  }
  assert.fail("expected a ConfigError");
}

/** Every agent's extra roots, none: what the defaults give. */
const NO_ROOTS = Object.fromEntries(OTHER_AGENTS.map((agent) => [agent, []]));
Deno.test("loadConfig() gives the defaults when no file or variable sets anything", () => {
  withDirs((dirs) => {
    const opts = { env: envFrom({}), configDir: dirs.configDir };
    // The result is the caller's to change; the defaults stay as they are.
    const changed = loadConfig(opts).config;
    assert.equal(changed.tokenBudget, undefined);
    changed.history.roots.claude!.push("/x");
    changed.dashboard.port = 1;
    assert.deepEqual(DEFAULTS.history.roots.claude, []);
    assert.equal(DEFAULTS.dashboard.port, 8787);

    assert.deepEqual(loadConfig(opts), { config: DEFAULTS, files: [], warnings: [] });
    assert.deepEqual(loadConfig(opts).config, {
      history: { ingest: true, roots: NO_ROOTS },
      secrets: {},
      allowedSecrets: [],
      prices: {},
      dashboard: { port: 8787 },
    });
  });
});

Deno.test("loadConfig() treats missing files and a missing .logbook folder as absent", () => {
  withDirs((dirs) => {
    const loaded = loadConfig(options(dirs));
    assert.deepEqual(loaded.files, []);
    assert.equal(loaded.projectConfigDir, undefined);
    assert.deepEqual(loaded.config, DEFAULTS);

    // The folder without a file is reported, and still sets nothing.
    Deno.mkdirSync(join(dirs.projectRoot, ".logbook"));
    const withFolder = loadConfig(options(dirs));
    assert.equal(withFolder.projectConfigDir, join(dirs.projectRoot, ".logbook"));
    assert.deepEqual(withFolder.files, []);
  });
});

Deno.test("loadConfig() ranks each level above the one below it", async (t) => {
  // Levels lowest first; each row sets every level up to and including one, which must win.
  const levels = [
    { name: "defaults", expected: undefined, set: (_: Dirs, __: Record<string, string>) => {} },
    {
      name: "global top level",
      expected: 100,
      set: (d: Dirs) => write(d.globalFile, { tokenBudget: 100 }),
    },
    {
      name: "global agent section",
      expected: 200,
      set: (d: Dirs) => write(d.globalFile, { tokenBudget: 100, codex: { tokenBudget: 200 } }),
    },
    {
      name: "project top level",
      expected: 300,
      set: (d: Dirs) => write(d.projectFile, { tokenBudget: 300 }),
    },
    {
      name: "project agent section",
      expected: 400,
      set: (d: Dirs) => write(d.projectFile, { tokenBudget: 300, codex: { tokenBudget: 400 } }),
    },
    {
      name: "environment",
      expected: 500,
      set: (_: Dirs, env: Record<string, string>) => env.LOGBOOK_TOKEN_BUDGET = "500",
    },
  ];
  for (const [top, level] of levels.entries()) {
    await t.step(`${level.name} wins over everything below it`, () => {
      withDirs((dirs) => {
        const env: Record<string, string> = {};
        for (const lower of levels.slice(0, top + 1)) lower.set(dirs, env);
        const { config } = loadConfig(options(dirs, env));
        assert.equal(config.tokenBudget, level.expected);
      });
    });
  }
});

Deno.test("loadConfig() applies only the section of the agent it is given", () => {
  withDirs((dirs) => {
    write(dirs.globalFile, { model: "top", claude: { model: "claude-section" } });
    write(dirs.projectFile, { opencode: { model: "opencode-section" } });
    assert.equal(loadConfig(options(dirs)).config.model, "top");
    assert.equal(loadConfig({ ...options(dirs), agent: "claude" }).config.model, "claude-section");
    const { agent: _, ...noAgent } = options(dirs);
    assert.equal(loadConfig(noAgent).config.model, "top");
  });
});

Deno.test("loadConfig() merges objects deeply and replaces arrays", () => {
  withDirs((dirs) => {
    write(dirs.globalFile, {
      history: { ingest: true, roots: { claude: ["/g/claude"], opencode: ["/g/opencode"] } },
      secrets: { db: "global-db-password", token: "global-token" },
      allowedSecrets: ["db"],
      codex: { history: { roots: { opencode: ["/c/opencode"] } }, allowedSecrets: ["token"] },
    });
    write(dirs.projectFile, {
      history: { ingest: false },
      secrets: { build: "project-build-token" },
    });
    const loaded = loadConfig(options(dirs));
    assert.deepEqual(loaded.files, [dirs.projectFile, dirs.globalFile]);
    assert.deepEqual(loaded.warnings, []);
    assert.deepEqual(loaded.config.history, {
      ingest: false,
      roots: { ...NO_ROOTS, claude: ["/g/claude"], opencode: ["/c/opencode"] },
    });
    assert.deepEqual(loaded.config.secrets, {
      db: "global-db-password",
      token: "global-token",
      build: "project-build-token",
    });
    assert.deepEqual(loaded.config.allowedSecrets, ["token"]);
  });
});

Deno.test("loadConfig() takes from a project's file only what a stranger may choose", () => {
  withDirs((dirs) => {
    const user = {
      history: { ingest: false, roots: { claude: ["/mine"] } },
      model: "user-model",
      baseUrl: "https://api.user.example/v1",
      apiKey: "sk-the-users-own-key",
      secrets: { token: "the-users-token" },
      allowedSecrets: ["token"],
      team: { url: "postgres://me@team.user.example/t", projects: ["/src/mine"], machine: "lap" },
      dashboard: { port: 9000 },
    };
    write(dirs.globalFile, user);
    write(dirs.projectFile, {
      $schema: "https://example.com/logbook.schema.json",
      history: { ingest: true, roots: { claude: ["/"], codex: ["../.."] } },
      model: "project-model",
      tokenBudget: 2000,
      baseUrl: "https://collector.example/v1",
      apiKey: "sk-the-repos-key",
      secrets: { token: "xxxx", extra: "project-extra" },
      allowedSecrets: ["token", "extra"],
      team: { url: "postgres://x@collector.example/t", raw: true, projects: ["/"], machine: "m" },
      dashboard: { port: 80 },
      codex: { baseUrl: "https://codex.collector.example/v1", model: "project-codex-model" },
      claude: { team: { raw: true } },
    });
    const loaded = loadConfig(options(dirs));
    const file = dirs.projectFile;
    const only = "only your own config or the environment can set it";
    assert.deepEqual(loaded.warnings.toSorted(), [
      `Ignored "allowedSecrets" in the project config "${file}": ${only}`,
      `Ignored "apiKey" in the project config "${file}": ${only}`,
      `Ignored "baseUrl" in the project config "${file}": ${only}`,
      `Ignored "claude.team.raw" in the project config "${file}": ${only}`,
      `Ignored "codex.baseUrl" in the project config "${file}": ${only}`,
      `Ignored "dashboard.port" in the project config "${file}": ${only}`,
      `Ignored "history.ingest" in the project config "${file}": a project's file can only ` +
      "turn capture off",
      `Ignored "history.roots.claude" in the project config "${file}": ${only}`,
      `Ignored "history.roots.codex" in the project config "${file}": ${only}`,
      `Ignored "secrets.token" in the project config "${file}": your own config sets that label`,
      `Ignored "team.machine" in the project config "${file}": ${only}`,
      `Ignored "team.projects" in the project config "${file}": ${only}`,
      `Ignored "team.raw" in the project config "${file}": ${only}`,
      `Ignored "team.url" in the project config "${file}": ${only}`,
    ]);
    assert.deepEqual(loaded.config, {
      history: { ingest: false, roots: { ...NO_ROOTS, claude: ["/mine"] } },
      // What a stranger may choose: which model, how much context, more redaction.
      model: "project-codex-model",
      tokenBudget: 2000,
      secrets: { token: "the-users-token", extra: "project-extra" },
      baseUrl: user.baseUrl,
      apiKey: user.apiKey,
      allowedSecrets: user.allowedSecrets,
      prices: {},
      team: user.team,
      dashboard: user.dashboard,
    });
    // The environment still wins over the project's file where it may set something.
    const env = loadConfig(options(dirs, { LOGBOOK_MODEL: "env-model" }));
    assert.equal(env.config.model, "env-model");
  });
});

Deno.test("loadConfig() lets a project's file turn capture off, not on", () => {
  withDirs((dirs) => {
    write(dirs.projectFile, { history: { ingest: false } });
    assert.equal(loadConfig(options(dirs)).config.history.ingest, false);
    write(dirs.globalFile, { history: { ingest: false } });
    write(dirs.projectFile, { codex: { history: { ingest: true } } });
    const loaded = loadConfig(options(dirs));
    assert.equal(loaded.config.history.ingest, false);
    assert.match(loaded.warnings.join("\n"), /"codex\.history\.ingest".*only turn capture off/);
  });
});

Deno.test('loadConfig() ignores "mirror" in any file, saying what turns a mirror on', () => {
  withDirs((dirs) => {
    write(dirs.globalFile, { mirror: true, logbook: { mirror: false } });
    write(dirs.projectFile, { mirror: true, model: "kept" });
    const loaded = loadConfig(options(dirs));
    const why = 'a config file cannot turn a mirror on: run "logbook mirror enable" in a ' +
      "project to mirror it";
    assert.deepEqual(loaded.warnings, [
      `Ignored "mirror" in "${dirs.globalFile}": ${why}`,
      `Ignored "logbook.mirror" in "${dirs.globalFile}": ${why}`,
      `Ignored "mirror" in "${dirs.projectFile}": ${why}`,
    ]);
    assert.equal(loaded.config.model, "kept");
    assert.ok(!("mirror" in loaded.config));
  });
});

Deno.test("loadConfig() writes what a file names in a warning so that a terminal cannot act on it", () => {
  withDirs((dirs) => {
    write(dirs.projectFile, { "\u001b]52;c;ZXZpbA==\u0007": 1, "ab\u202ecd": 2 });
    assert.deepEqual(loadConfig(options(dirs)).warnings, [
      `Unknown key "\\u001b]52;c;ZXZpbA==\\u0007" in "${dirs.projectFile}"`,
      `Unknown key "ab\\u202ecd" in "${dirs.projectFile}"`,
    ]);
  });
});

Deno.test("loadConfig() reads each environment variable", async (t) => {
  const cases: [string, Record<string, string>, (c: ReturnType<typeof loadConfig>) => unknown][] = [
    ["LOGBOOK_MODEL", { LOGBOOK_MODEL: "gpt-x" }, (l) => l.config.model === "gpt-x"],
    [
      "OPENAI_BASE_URL",
      { OPENAI_BASE_URL: "http://127.0.0.1:8080/v1" },
      (l) => l.config.baseUrl === "http://127.0.0.1:8080/v1",
    ],
    ["OPENAI_API_KEY", { OPENAI_API_KEY: "sk-env" }, (l) => l.config.apiKey === "sk-env"],
    [
      "LOGBOOK_TOKEN_BUDGET",
      { LOGBOOK_TOKEN_BUDGET: "64000" },
      (l) => l.config.tokenBudget === 64000,
    ],
  ];
  for (const [name, env, check] of cases) {
    await t.step(`${name} overrides both files`, () => {
      withDirs((dirs) => {
        const fileValues = {
          model: "file",
          baseUrl: "https://file.example/v1",
          apiKey: "sk-file",
          tokenBudget: 1,
        };
        write(dirs.globalFile, fileValues);
        write(dirs.projectFile, { codex: fileValues });
        assert.ok(check(loadConfig(options(dirs, env))));
      });
    });
  }

  for (const value of ["0", "false", "no", "off", "OFF", " No "]) {
    await t.step(`LOGBOOK_INGEST=${JSON.stringify(value)} turns ingestion off`, () => {
      withDirs((dirs) => {
        write(dirs.projectFile, { codex: { history: { ingest: true } } });
        const { config } = loadConfig(options(dirs, { LOGBOOK_INGEST: value }));
        assert.equal(config.history.ingest, false);
      });
    });
  }
  for (const value of ["1", "true", "yes", "on", "TRUE"]) {
    await t.step(`LOGBOOK_INGEST=${JSON.stringify(value)} turns ingestion on`, () => {
      withDirs((dirs) => {
        write(dirs.projectFile, { codex: { history: { ingest: false } } });
        const { config } = loadConfig(options(dirs, { LOGBOOK_INGEST: value }));
        assert.equal(config.history.ingest, true);
      });
    });
  }

  await t.step("an empty variable counts as unset", () => {
    withDirs((dirs) => {
      write(dirs.globalFile, { model: "file", history: { ingest: false } });
      const { config } = loadConfig(options(dirs, { LOGBOOK_MODEL: "", LOGBOOK_INGEST: "" }));
      assert.equal(config.model, "file");
      assert.equal(config.history.ingest, false);
    });
  });
});

Deno.test("loadConfig() names the variable that has an invalid value", async (t) => {
  const cases: [string, string, string][] = [
    ["LOGBOOK_INGEST", "maybe", "on or off (or 1 or 0, true or false, yes or no)"],
    ["LOGBOOK_TOKEN_BUDGET", "0", "a positive whole number"],
    ["LOGBOOK_TOKEN_BUDGET", "12k", "a positive whole number"],
    ["OPENAI_BASE_URL", "ftp://example.com", "an http(s) URL"],
    ["LOGBOOK_TEAM_URL", "mysql://db", "a postgres:// URL"],
  ];
  for (const [variable, value, expected] of cases) {
    await t.step(`${variable}=${value}`, () => {
      withDirs((dirs) => {
        const err = throwsConfigError(
          () => loadConfig(options(dirs, { [variable]: value })),
          `Environment variable "${variable}" expects ${expected}, got "${value}"`,
        );
        assert.equal(err.variable, variable);
        assert.equal(err.file, undefined);
      });
    });
  }
});

Deno.test("loadConfig() names the file, key and expectation of an invalid value", async (t) => {
  const cases: [string, unknown, string | undefined, string][] = [
    [
      "a string for a boolean",
      { history: { ingest: "yes" } },
      "history.ingest",
      'key "history.ingest": expected a boolean, got "yes"',
    ],
    [
      "a port out of range",
      { dashboard: { port: 70000 } },
      "dashboard.port",
      'key "dashboard.port": expected a port number from 1 to 65535, got 70000',
    ],
    [
      "a fractional budget",
      { tokenBudget: 1.5 },
      "tokenBudget",
      'key "tokenBudget": expected a positive integer, got 1.5',
    ],
    [
      "a URL that is not http(s)",
      { baseUrl: "file:///etc" },
      "baseUrl",
      'key "baseUrl": expected an http(s) URL, got "file:///etc"',
    ],
    [
      "a root that is not a string",
      { history: { roots: { claude: ["/a", 7] } } },
      "history.roots.claude[1]",
      'key "history.roots.claude[1]": expected a path, got 7',
    ],
    [
      "roots as a string",
      { history: { roots: { codex: "/a" } } },
      "history.roots.codex",
      'key "history.roots.codex": expected an array of paths, got "/a"',
    ],
    [
      "a bad secret label",
      { secrets: { "two words": "value" } },
      "secrets.two words",
      'key "secrets.two words": expected a label of 1 to 64 letters, digits, "_", "." or "-"',
    ],
    [
      "a bad value in an agent section",
      { codex: { model: 3 } },
      "codex.model",
      'key "codex.model": expected a string, got 3',
    ],
    [
      "an agent section that is not an object",
      { claude: [] },
      "claude",
      'key "claude": expected an object, got an array',
    ],
    [
      "a top level that is not an object",
      [1, 2],
      undefined,
      "expected a JSON object, got an array",
    ],
    ["null at the top level", null, undefined, "expected a JSON object, got null"],
  ];
  for (const [name, content, key, detail] of cases) {
    await t.step(name, () => {
      withDirs((dirs) => {
        write(dirs.globalFile, { model: "fine" });
        write(dirs.projectFile, content);
        const err = throwsConfigError(
          () => loadConfig(options(dirs)),
          `Invalid config "${dirs.projectFile}": ${detail}`,
        );
        assert.equal(err.file, dirs.projectFile);
        assert.equal(err.key, key);
      });
    });
  }

  await t.step("secret values are described, never echoed", () => {
    withDirs((dirs) => {
      write(dirs.globalFile, { secrets: { db: "abc" }, logbook: { apiKey: 12345 } });
      const err = throwsConfigError(
        () => loadConfig(options(dirs)),
        `Invalid config "${dirs.globalFile}": ` +
          'key "secrets.db": expected at least 4 characters, got a string of 3 characters; ' +
          'key "logbook.apiKey": expected a string, got 12345',
      );
      assert.equal(err.key, "secrets.db");
      assert.ok(!err.message.includes('"abc"'));
    });
  });
});

Deno.test("loadConfig() names the file and position of invalid JSON", async (t) => {
  const cases: [string, string, string][] = [
    ["a trailing comma", '{\n  "model": "x",\n}\n', 'unexpected "}" at line 3, column 1'],
    ["a misspelt literal", '{"history": {"ingest": tru}}', 'unexpected "tru" at line 1, column 24'],
    ["an empty file", "", "unexpected end of input at line 1, column 1"],
    ["an unterminated string", '{\n"model": "x', "unterminated string at line 2, column 10"],
    ["text after the object", '{"model": "x"} {}', 'unexpected "{" at line 1, column 16'],
    [
      "a missing comma",
      '{"model": "x"\n "history": {}}',
      'unexpected "\\"history\\"" at line 2, column 2',
    ],
    [
      "a comment",
      '{\n  // the model\n  "model": "x"\n}',
      "comments are not allowed at line 2, column 3",
    ],
    ["a tab in a string", '{"model": "a\tb"}', "control character in string at line 1, column 11"],
    ["a bad escape", '{"model": "a\\qb"}', "invalid escape in string at line 1, column 11"],
  ];
  for (const [name, source, detail] of cases) {
    await t.step(name, () => {
      withDirs((dirs) => {
        write(dirs.globalFile, source);
        const err = throwsConfigError(
          () => loadConfig(options(dirs)),
          `Invalid JSON in config "${dirs.globalFile}": ${detail}`,
        );
        assert.equal(err.file, dirs.globalFile);
        assert.ok(err.cause instanceof SyntaxError);
      });
    });
  }
});

Deno.test("loadConfig() refuses a config path that is a directory", () => {
  withDirs((dirs) => {
    Deno.mkdirSync(dirs.globalFile, { recursive: true });
    const err = throwsConfigError(
      () => loadConfig(options(dirs)),
      `Cannot read config "${dirs.globalFile}": it is a directory`,
    );
    assert.equal(err.file, dirs.globalFile);
  });
});

Deno.test("loadConfig() warns about unknown keys and loads the rest", () => {
  withDirs((dirs) => {
    write(dirs.globalFile, {
      $schema: "https://example.com/logbook.schema.json",
      histroy: { ingest: false },
      history: { ingets: false, roots: { martian: ["/x"], claude: ["/c"] } },
      model: "kept",
      codex: { futureSetting: 1, tokenBudget: 9 },
    });
    const loaded = loadConfig(options(dirs));
    assert.deepEqual(loaded.warnings.toSorted(), [
      `Unknown key "codex.futureSetting" in "${dirs.globalFile}"`,
      `Unknown key "history.ingets" in "${dirs.globalFile}"`,
      `Unknown key "history.roots.martian" in "${dirs.globalFile}"`,
      `Unknown key "histroy" in "${dirs.globalFile}"`,
    ]);
    assert.equal(loaded.config.model, "kept");
    assert.equal(loaded.config.tokenBudget, 9);
    assert.equal(loaded.config.history.ingest, true);
    assert.deepEqual(loaded.config.history.roots, { ...NO_ROOTS, claude: ["/c"] });
    assert.ok(!("histroy" in loaded.config));
  });
});

Deno.test("loadConfig() expands ~/ and resolves relative roots against the file's folder", () => {
  withDirs((dirs) => {
    write(dirs.globalFile, {
      history: { roots: { claude: ["~/claude-extra", "~", "extra", "/abs/a/../b"] } },
      codex: { history: { roots: { codex: ["../vendor", "./x"] } } },
    });
    const { config, warnings } = loadConfig(options(dirs));
    assert.deepEqual(warnings, []);
    assert.deepEqual(config.history.roots, {
      ...NO_ROOTS,
      claude: [join(dirs.home, "claude-extra"), dirs.home, join(dirs.configDir, "extra"), "/abs/b"],
      codex: [join(dirs.configDir, "..", "vendor"), join(dirs.configDir, "x")],
    });
  });
});

Deno.test("loadConfig() skips a ~/ root with a warning when HOME is not set", () => {
  withDirs((dirs) => {
    write(dirs.globalFile, { history: { roots: { opencode: ["~/oc", "/kept"] } } });
    const { config, warnings } = loadConfig({ ...options(dirs), env: envFrom({}) });
    assert.deepEqual(config.history.roots.opencode, ["/kept"]);
    assert.deepEqual(warnings, [
      `Cannot expand "~/oc" in "${dirs.globalFile}" (key "history.roots.opencode"): ` +
      "HOME is not set",
    ]);
  });
});

Deno.test("loadConfig() loads every setting from a file", () => {
  withDirs((dirs) => {
    write(dirs.globalFile, {
      history: { ingest: false, roots: { claude: ["/c"], codex: ["/x"], opencode: ["/o"] } },
      model: "m",
      baseUrl: "https://api.example.com/v1",
      apiKey: "sk-123",
      tokenBudget: 32000,
      secrets: { "db.password": "hunter22" },
      allowedSecrets: ["db.password"],
      prices: { "house-model": { input: 1, output: 2.5, cacheRead: 0.1 } },
      dashboard: { port: 9000 },
    });
    assert.deepEqual(loadConfig(options(dirs)).config, {
      history: {
        ingest: false,
        roots: { ...NO_ROOTS, claude: ["/c"], codex: ["/x"], opencode: ["/o"] },
      },
      model: "m",
      baseUrl: "https://api.example.com/v1",
      apiKey: "sk-123",
      tokenBudget: 32000,
      secrets: { "db.password": "hunter22" },
      allowedSecrets: ["db.password"],
      prices: { "house-model": { input: 1, output: 2.5, cacheRead: 0.1 } },
      dashboard: { port: 9000 },
    });
  });
});

Deno.test("loadConfig() refuses a price that is not USD per million tokens", () => {
  withDirs((dirs) => {
    write(dirs.globalFile, { prices: { "house-model": { input: -1, output: 2 } } });
    assert.throws(() => loadConfig(options(dirs)), /prices.*house-model.*input/s);
    write(dirs.globalFile, { prices: { "house-model": { output: 2 } } });
    assert.throws(() => loadConfig(options(dirs)), /at least "input" and "output"/);
  });
});
