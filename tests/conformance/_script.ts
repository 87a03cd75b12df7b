// The conformance suite's script: what is said to each agent, what the model answers, and the
// words that must be found again in what logbook captured.

import { join } from "node:path";
import type { Plan, Script } from "./_model_server.ts";

export const TITLE = "Heliotrope ledger walkthrough";
export const SUMMARY = "Summary so far: the notes were read; quillmarsh is the word to keep.";

export const START: Plan = {
  id: "quasarbeet",
  steps: [{ kind: "shell", command: "cat notes.txt" }],
  answer: "The notes mention marmalith and vintrope.",
};
export const RESUME: Plan = { id: "cobaltwren", steps: [], answer: "Resumed fine: plumquartz." };
export const DELEGATE: Plan = {
  id: "zephyrkiln",
  steps: [{
    kind: "subagent",
    description: "Inspect the notes",
    prompt: "Subtask glimmerfane: read the notes and report.",
  }],
  answer: "The helper reported back: orchidvault.",
};
const HEAVY: Plan = {
  id: "basaltmoth",
  steps: [],
  answer: "A heavy answer: saffronloom.",
  reportTokens: 200_000,
};
const AFTER_COMPACTION: Plan = { id: "hollowfern", steps: [], answer: "After it: ivorytrench." };
const FORK: Plan = { id: "velvetcrag", steps: [], answer: "The fork's answer: amberloch." };
const TERMINAL: Plan = {
  id: "juniperveil",
  steps: [],
  answer: "The terminal answer: saltmoraine.",
};

/** Codex's subagents run alongside: the parent spawns one, then waits for it. */
const DELEGATE_AND_WAIT: Plan = { ...DELEGATE, steps: [...DELEGATE.steps, { kind: "wait" }] };

/** The subagent's plan: read the project's notes with a file tool. */
export function subtask(project: string): Plan {
  return {
    id: "glimmerfane",
    steps: [{ kind: "read", path: join(project, "notes.txt") }],
    answer: "Subagent result: tessellark.",
  };
}

/** The whole script of one agent's run in the project `project`. */
export function script(project: string, agent?: string): Script {
  return {
    title: TITLE,
    summary: SUMMARY,
    plans: [
      START,
      RESUME,
      agent === "codex" ? DELEGATE_AND_WAIT : DELEGATE,
      subtask(project),
      HEAVY,
      AFTER_COMPACTION,
      FORK,
      TERMINAL,
    ],
  };
}

export const PROMPTS = {
  start: "Read the notes for me, quasarbeet lanternfig.",
  resume: "Carry on, cobaltwren.",
  delegate: "Hand this to a helper, zephyrkiln.",
  heavy: "A long one now, basaltmoth.",
  afterCompaction: "And then, hollowfern.",
  fork: "On the fork, velvetcrag.",
  terminal: "Back in the terminal, juniperveil.",
};
