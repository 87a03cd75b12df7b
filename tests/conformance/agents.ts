// The agents the conformance suite runs, pinned to the versions it was last checked against.
// Bump a version only with a reason in the commit (a new record type the adapter now knows, say),
// after `deno task conformance --latest` has run the suite against it.

/** An agent's npm package, the version the suite pins and the program it installs. */
export interface AgentPin {
  /** logbook's name for the agent (`claude:`, `codex:`, `opencode:` conversation ids). */
  agent: "claude" | "codex" | "opencode";
  package: string;
  version: string;
  bin: string;
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
