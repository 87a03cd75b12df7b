// One agent's throw-away world for the conformance suite: a home of its own, a project (a Git
// repository with a file to read), logbook's data and config dirs, the agent's configuration
// pointing at the local model server, and ways to run the agent, logbook's commands, and the
// agent's terminal UI under tmux.

import { join } from "node:path";
import type { Installed } from "./_install.ts";
import type { ModelServer } from "./_model_server.ts";

const REPO = new URL("../../", import.meta.url).pathname;

/** What the file in the project says (words the tool's output carries into the transcript). */
export const NOTES = "Field notes: copperwhistle and driftmallow.\n";

/** A world for one agent. */
export interface Rig {
  root: string;
  home: string;
  project: string;
  data: string;
  config: string;
  installed: Installed;
  server: ModelServer;
  /** The environment every agent run gets (nothing is inherited but PATH and TERM). */
  env: Record<string, string>;
  cleanup(): Promise<void>;
}

/** What a finished process said. */
export interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

const API_KEY = "sk-conformance-local-key-0000";

/** Makes the world and writes the agent's configuration. */
export async function makeRig(installed: Installed, server: ModelServer): Promise<Rig> {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "logbook-conformance-" }));
  const home = join(root, "home");
  const project = join(root, "project");
  const data = join(root, "logbook-data");
  const config = join(root, "logbook-config");
  for (const dir of [home, project, data, config]) await Deno.mkdir(dir, { recursive: true });
  await Deno.writeTextFile(join(project, "notes.txt"), NOTES);
  for (const args of [["init", "-q", "-b", "main"], ["add", "notes.txt"]]) {
    await git(project, args);
  }
  await git(project, [
    "-c",
    "user.name=Conformance",
    "-c",
    "user.email=c@example.invalid",
    "commit",
    "-qm",
    "notes",
  ]);
  const env: Record<string, string> = {
    HOME: home,
    PATH: `${join(installed.dir, "node_modules", ".bin")}:${
      Deno.env.get("PATH") ?? "/usr/bin:/bin"
    }`,
    TERM: "xterm-256color",
    LANG: "C.UTF-8",
    // Anything that is not the model server goes to a proxy that refuses and records it.
    HTTPS_PROXY: server.proxy,
    HTTP_PROXY: server.proxy,
    ALL_PROXY: server.proxy,
    https_proxy: server.proxy,
    http_proxy: server.proxy,
    NO_PROXY: "127.0.0.1,localhost",
    no_proxy: "127.0.0.1,localhost",
  };
  const rig: Rig = {
    root,
    home,
    project,
    data,
    config,
    installed,
    server,
    env,
    cleanup: async () => {
      await endLeftovers(root);
      await Deno.remove(root, { recursive: true }).catch(() => {});
    },
  };
  switch (installed.pin.agent) {
    case "claude":
      await configureClaude(rig);
      break;
    case "codex":
      await configureCodex(rig);
      break;
    case "opencode":
      await configureOpencode(rig);
      break;
    case "gemini":
      await configureGemini(rig);
      break;
    case "copilot":
      configureCopilot(rig);
      break;
    case "qwen":
      await configureQwen(rig);
      break;
    case "continue":
      await configureContinue(rig);
      break;
    case "kilo":
      configureKilo(rig);
      break;
    case "droid":
      await configureDroid(rig);
      break;
    case "cline":
      await configureCline(rig);
      break;
  }
  return rig;
}

/**
 * Gemini CLI: the Gemini API at `GOOGLE_GEMINI_BASE_URL` with an API key (settings must choose
 * `gemini-api-key`: nothing else runs offline), and update checks, usage statistics, telemetry
 * and folder trust off in `~/.gemini/settings.json`.
 */
async function configureGemini(rig: Rig): Promise<void> {
  Object.assign(rig.env, { GOOGLE_GEMINI_BASE_URL: rig.server.origin, GEMINI_API_KEY: API_KEY });
  const dir = join(rig.home, ".gemini");
  await Deno.mkdir(dir, { recursive: true });
  await Deno.writeTextFile(
    join(dir, "settings.json"),
    JSON.stringify(
      {
        security: { auth: { selectedType: "gemini-api-key" }, folderTrust: { enabled: false } },
        general: { disableAutoUpdate: true, disableUpdateNag: true },
        privacy: { usageStatisticsEnabled: false },
        telemetry: { enabled: false },
      },
      null,
      2,
    ),
  );
}

/** GitHub Copilot CLI: offline, with a bring-your-own-key provider speaking Chat Completions. */
function configureCopilot(rig: Rig): void {
  Object.assign(rig.env, {
    COPILOT_OFFLINE: "true",
    COPILOT_PROVIDER_BASE_URL: `${rig.server.origin}/v1`,
    COPILOT_PROVIDER_TYPE: "openai",
    COPILOT_PROVIDER_API_KEY: API_KEY,
    COPILOT_MODEL: "conformance-model",
    COPILOT_AUTO_UPDATE: "false",
  });
}

/**
 * Qwen Code: its `openai` auth type, pointed at the server by the OpenAI variables; usage
 * statistics (sent to Alibaba Cloud's RUM host) and telemetry off in `~/.qwen/settings.json`.
 */
async function configureQwen(rig: Rig): Promise<void> {
  Object.assign(rig.env, {
    OPENAI_BASE_URL: `${rig.server.origin}/v1`,
    OPENAI_API_KEY: API_KEY,
    OPENAI_MODEL: "conformance-model",
  });
  const dir = join(rig.home, ".qwen");
  await Deno.mkdir(dir, { recursive: true });
  await Deno.writeTextFile(
    join(dir, "settings.json"),
    JSON.stringify(
      {
        privacy: { usageStatisticsEnabled: false },
        telemetry: { enabled: false },
        general: { disableAutoUpdate: true, disableUpdateNag: true },
      },
      null,
      2,
    ),
  );
}

/** The Continue CLI's config (`cn --config <rig>/continue.yaml`): one `openai` model. */
export function continueConfig(rig: Rig): string {
  return join(rig.root, "continue.yaml");
}

async function configureContinue(rig: Rig): Promise<void> {
  await Deno.writeTextFile(
    continueConfig(rig),
    [
      "name: Conformance",
      "version: 1.0.0",
      "schema: v1",
      "models:",
      "  - name: Conformance Model",
      "    provider: openai",
      "    model: conformance-model",
      `    apiBase: ${rig.server.origin}/v1`,
      `    apiKey: ${API_KEY}`,
      "    roles: [chat, edit, apply, summarize]",
      "",
    ].join("\n"),
  );
}

/**
 * Kilo Code CLI (an OpenCode fork): the config OpenCode gets (`openaiCompatible`), given in
 * `KILO_CONFIG_CONTENT`; the model list, auto-update and telemetry off by its variables, its own
 * gateway provider disabled.
 */
function configureKilo(rig: Rig): void {
  Object.assign(rig.env, {
    KILO_DISABLE_MODELS_FETCH: "1",
    KILO_DISABLE_AUTOUPDATE: "1",
    // PostHog telemetry is on unless this says "all"... or anything else.
    KILO_TELEMETRY_LEVEL: "off",
    KILO_CONFIG_CONTENT: JSON.stringify({
      ...openaiCompatible(rig),
      // Kilo's own gateway provider would ask api.kilo.ai for its models and defaults.
      disabled_providers: ["kilo"],
    }),
  });
}

/**
 * Factory Droid: a custom model in `~/.factory/settings.json` speaking Chat Completions at the
 * server (`droid exec -m <DROID_MODEL>` picks it).
 */
async function configureDroid(rig: Rig): Promise<void> {
  const dir = join(rig.home, ".factory");
  await Deno.mkdir(dir, { recursive: true });
  await Deno.writeTextFile(
    join(dir, "settings.json"),
    JSON.stringify(
      {
        customModels: [{
          model: "conformance-model",
          displayName: "Conformance Model",
          baseUrl: `${rig.server.origin}/v1`,
          apiKey: API_KEY,
          provider: "generic-chat-completion-api",
          maxOutputTokens: 4000,
        }],
      },
      null,
      2,
    ),
  );
}

/** The model id `droid exec -m` takes for the rig's custom model. */
export const DROID_MODEL = "custom:conformance-model";

/**
 * Cline: its `openai` provider at the server, set by `cline auth` (which writes its settings
 * under `~/.cline`).
 */
async function configureCline(rig: Rig): Promise<void> {
  const ran = await runAgent(rig, [
    "auth",
    "-p",
    "openai",
    "-k",
    API_KEY,
    "-m",
    "conformance-model",
    "-b",
    `${rig.server.origin}/v1`,
  ]);
  if (ran.code !== 0) throw new Error(`cline auth failed: ${ran.stderr || ran.stdout}`);
}

/**
 * Claude Code: the Messages API at `ANTHROPIC_BASE_URL`; updates, telemetry, error reports, the
 * official plugin marketplace and all non-essential traffic off (its documented variables); and
 * in `~/.claude.json` the first-run questions answered (onboarding done, this API key approved,
 * the project trusted) so its terminal UI opens straight on the prompt.
 */
async function configureClaude(rig: Rig): Promise<void> {
  Object.assign(rig.env, {
    ANTHROPIC_BASE_URL: rig.server.origin,
    ANTHROPIC_API_KEY: API_KEY,
    DISABLE_AUTOUPDATER: "1",
    DISABLE_TELEMETRY: "1",
    DISABLE_ERROR_REPORTING: "1",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL: "1",
  });
  await Deno.writeTextFile(
    join(rig.home, ".claude.json"),
    JSON.stringify({
      hasCompletedOnboarding: true,
      theme: "dark",
      customApiKeyResponses: { approved: [API_KEY.slice(-20)], rejected: [] },
      projects: { [rig.project]: { hasTrustDialogAccepted: true, allowedTools: [] } },
    }),
  );
}

/**
 * Codex: a `model_providers` entry speaking the Responses API; update checks and analytics off,
 * and the features that reach other hosts at start (plugin sync, remote plugins, apps) off;
 * the project trusted, no approvals and no sandbox (the project is a throw-away folder).
 */
async function configureCodex(rig: Rig): Promise<void> {
  rig.env.CONFORMANCE_API_KEY = API_KEY;
  const codexHome = join(rig.home, ".codex");
  await Deno.mkdir(codexHome, { recursive: true });
  await Deno.writeTextFile(
    join(codexHome, "config.toml"),
    [
      `model = "conformance-model"`,
      `model_provider = "conformance"`,
      `check_for_update_on_startup = false`,
      `approval_policy = "never"`,
      `sandbox_mode = "danger-full-access"`,
      // Compacts once a turn reports more than this many tokens (the script's heavy turn does).
      `model_auto_compact_token_limit = 50000`,
      ``,
      `[model_providers.conformance]`,
      `name = "Conformance"`,
      `base_url = "${rig.server.origin}/v1"`,
      `env_key = "CONFORMANCE_API_KEY"`,
      `wire_api = "responses"`,
      ``,
      `[analytics]`,
      `enabled = false`,
      ``,
      `[features]`,
      `plugins = false`,
      `remote_plugin = false`,
      `apps = false`,
      // The terminal UI would start a daemon that outlives it; it runs its server in-process.
      `daemon_auto_start = false`,
      ``,
      `[projects."${rig.project}"]`,
      `trust_level = "trusted"`,
      ``,
    ].join("\n"),
  );
}

/**
 * OpenCode: the shared OpenCode-style config (`openaiCompatible`); autoupdate and sharing off by
 * its variables too, no model list or LSP downloads. OpenCode installs
 * `@opencode-ai/plugin` into its config dir unless it is there: the copy installed beside it is
 * put there, so nothing is fetched.
 */
async function configureOpencode(rig: Rig): Promise<void> {
  Object.assign(rig.env, {
    OPENCODE_DISABLE_AUTOUPDATE: "1",
    OPENCODE_DISABLE_SHARE: "1",
    OPENCODE_DISABLE_MODELS_FETCH: "1",
    OPENCODE_DISABLE_LSP_DOWNLOAD: "1",
  });
  const dir = join(rig.home, ".config", "opencode");
  await Deno.mkdir(dir, { recursive: true });
  const companions = rig.installed.companions;
  if (companions) {
    for (const file of ["package.json", "package-lock.json"]) {
      await Deno.copyFile(join(companions, file), join(dir, file));
    }
    await Deno.symlink(join(companions, "node_modules"), join(dir, "node_modules"));
  }
  await Deno.writeTextFile(
    join(dir, "opencode.json"),
    JSON.stringify(
      { $schema: "https://opencode.ai/config.json", ...openaiCompatible(rig) },
      null,
      2,
    ),
  );
}

/**
 * The config OpenCode and Kilo share: the model server as an `@ai-sdk/openai-compatible`
 * provider (bundled in the binary: nothing is fetched for it) with a small context limit, so the
 * script's heavy turn makes it compact; autoupdate and sharing off.
 */
function openaiCompatible(rig: Rig): Record<string, unknown> {
  return {
    autoupdate: false,
    share: "disabled",
    model: "conformance/conformance-model",
    small_model: "conformance/conformance-model",
    provider: {
      conformance: {
        npm: "@ai-sdk/openai-compatible",
        name: "Conformance",
        options: { baseURL: `${rig.server.origin}/v1`, apiKey: API_KEY },
        models: {
          "conformance-model": {
            name: "Conformance Model",
            limit: { context: 60000, output: 4000 },
          },
        },
      },
    },
  };
}

/**
 * Ends processes an agent started from inside the rig and left running (a helper copied into
 * its home, say), by pid: only those whose program or arguments lie under the rig's root.
 */
async function endLeftovers(root: string): Promise<void> {
  const out = await new Deno.Command("ps", { args: ["-eo", "pid=,args="], stdout: "piped" })
    .output().catch(() => null);
  if (!out) return;
  for (const line of new TextDecoder().decode(out.stdout).split("\n")) {
    const match = /^\s*(\d+)\s+(.*)$/.exec(line);
    if (!match || !match[2]!.includes(root) || Number(match[1]) === Deno.pid) continue;
    try {
      Deno.kill(Number(match[1]), "SIGKILL");
    } catch {
      // Gone already.
    }
  }
}

async function git(cwd: string, args: string[]): Promise<void> {
  const out = await new Deno.Command("git", { args, cwd, stdout: "null", stderr: "piped" })
    .output();
  if (!out.success) {
    throw new Error(`git ${args.join(" ")}: ${new TextDecoder().decode(out.stderr)}`);
  }
}

/** Runs the agent's program with `args` in the project, no terminal, stdin closed. */
export async function runAgent(rig: Rig, args: string[], timeoutMs = 180_000): Promise<Ran> {
  return await spawn(rig.installed.bin, args, rig.project, rig.env, timeoutMs);
}

/** Runs a logbook command (`commands/<name>.ts`) as a user does, against this world. */
export async function logbook(
  rig: Rig,
  name: string,
  args: string[],
  cwd = rig.project,
): Promise<Ran> {
  const env = {
    // logbook's own dependencies come from the Deno cache this suite runs with.
    DENO_DIR: await denoDir(),
    HOME: rig.home,
    PATH: rig.env.PATH!,
    LOGBOOK_DATA_DIR: rig.data,
    LOGBOOK_CONFIG_DIR: rig.config,
    NO_COLOR: "1",
    LANG: "C.UTF-8",
  };
  return await spawn(
    Deno.execPath(),
    ["run", "-A", join(REPO, "commands", `${name}.ts`), ...args],
    cwd,
    env,
    180_000,
  );
}

let knownDenoDir: string | null = null;

/** The Deno cache of this process (`deno info --json`), so a command in the rig starts warm. */
async function denoDir(): Promise<string> {
  if (knownDenoDir) return knownDenoDir;
  const out = await new Deno.Command(Deno.execPath(), { args: ["info", "--json"], stdout: "piped" })
    .output();
  knownDenoDir = JSON.parse(new TextDecoder().decode(out.stdout)).denoDir as string;
  return knownDenoDir;
}

async function spawn(
  command: string,
  args: string[],
  cwd: string,
  env: Record<string, string>,
  timeoutMs: number,
): Promise<Ran> {
  const child = new Deno.Command(command, {
    args,
    cwd,
    env,
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const timer = setTimeout(() => {
    try {
      child.kill("SIGKILL");
    } catch {
      // Already gone.
    }
  }, timeoutMs);
  try {
    const out = await child.output();
    const decode = (b: Uint8Array) => new TextDecoder().decode(b);
    return { code: out.code, stdout: decode(out.stdout), stderr: decode(out.stderr) };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Runs `argv` in `cwd` in a tmux pane (a real terminal, 160×45), waits for its UI to settle,
 * types `prompt` and Enter, waits until `done()` says the reply was written (at most
 * `timeoutMs`), then ends the session. Returns whether `done()` became true, and the last
 * screen.
 */
export async function driveTui(
  rig: Rig,
  argv: string[],
  cwd: string,
  prompt: string,
  done: () => boolean | Promise<boolean>,
  timeoutMs = 120_000,
): Promise<{ ok: boolean; screen: string }> {
  const name = `conformance-${rig.installed.pin.agent}-${Date.now()}`;
  const socket = join(rig.root, "tmux.sock");
  const tmux = (...args: string[]) =>
    new Deno.Command("tmux", { args: ["-S", socket, ...args], stdout: "piped", stderr: "piped" })
      .output();
  const screen = async () =>
    new TextDecoder().decode((await tmux("capture-pane", "-p", "-t", name)).stdout);
  // The program is looked up on the rig's PATH, as a shell with that PATH would, and runs with
  // exactly the rig's environment (tmux's own shell would bring the machine's back).
  const program = which(argv[0]!, rig.env.PATH!);
  const vars = Object.entries(rig.env).map(([k, v]) => `${k}=${v}`);
  const started = await tmux(
    "new-session",
    "-d",
    "-s",
    name,
    "-x",
    "160",
    "-y",
    "45",
    "-c",
    cwd,
    "env",
    "-i",
    ...vars,
    program,
    ...argv.slice(1),
  );
  if (!started.success) {
    return { ok: false, screen: new TextDecoder().decode(started.stderr) };
  }
  const deadline = Date.now() + timeoutMs;
  try {
    // The UI is ready when the screen stops changing for a second.
    let last = "";
    let still = 0;
    while (Date.now() < deadline && still < 4) {
      await sleep(250);
      const now = await screen();
      still = now === last && now.trim() !== "" ? still + 1 : 0;
      last = now;
    }
    await tmux("send-keys", "-t", name, "-l", prompt);
    await sleep(500);
    await tmux("send-keys", "-t", name, "Enter");
    while (Date.now() < deadline) {
      if (await done()) return { ok: true, screen: await screen() };
      await sleep(500);
    }
    return { ok: false, screen: await screen() };
  } finally {
    await tmux("kill-server");
  }
}

/** The first executable `name` on `path` (or `name` itself when it holds a slash). */
function which(name: string, path: string): string {
  if (name.includes("/")) return name;
  for (const dir of path.split(":")) {
    try {
      const candidate = join(dir, name);
      if (Deno.statSync(candidate).isFile) return candidate;
    } catch {
      // Not in this folder.
    }
  }
  return name;
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/**
 * The words of a command line as `resume --print` writes it (`cd <dir> && <argv>`, words quoted
 * for a POSIX shell in `'…'` where they need it): the directory and the argv.
 */
export function parseCommandLine(line: string, userCwd: string): { cwd: string; argv: string[] } {
  const words: string[] = [];
  let word: string | null = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (c === "'") {
      const end = line.indexOf("'", i + 1);
      word = (word ?? "") + line.slice(i + 1, end);
      i = end;
    } else if (c === "\\" && i + 1 < line.length) {
      word = (word ?? "") + line[++i];
    } else if (c === " ") {
      if (word !== null) words.push(word);
      word = null;
    } else word = (word ?? "") + c;
  }
  if (word !== null) words.push(word);
  if (words[0] === "cd" && words[2] === "&&") return { cwd: words[1]!, argv: words.slice(3) };
  return { cwd: userCwd, argv: words };
}
