// A Claude Code session whose working directory holds a GitHub token (`…/dev/ghp_…/app`) and
// whose first answer holds a bare AWS secret key after a name that says a secret: the secrets
// are assembled at run time, so no file of the project holds one. What is shown or sent of it
// must hold neither.

import { join } from "node:path";
import { claudeTranscript, placeClaudeTranscript } from "./_claude_transcript.ts";
import type { World } from "./_helpers.ts";
import { fake, fakeAwsLetters } from "./lib/_secret_shapes.ts";

/** The token in the directory's name. */
export const PATH_TOKEN = "ghp" + "_" + fake(36);
/** The AWS secret key in the answer (letters only, as the gate used to take for a word). */
export const AWS_SECRET = fakeAwsLetters(40);
/** The session, and a word that finds it. */
export const SECRET_PATH_SESSION = "3c9e5b1a-7d2f-4e8a-9b6c-5d4e3f2a1b0c";
export const SECRET_PATH_ID = `claude:${SECRET_PATH_SESSION}`;
export const SECRET_PATH_WORD = "pangolin";

/** Writes the session into `world` where Claude Code keeps it; returns its working directory. */
export async function placeSecretPathSession(world: World): Promise<string> {
  const cwd = join(world.dir, "home", "dev", PATH_TOKEN, "app");
  await placeClaudeTranscript(
    world,
    cwd,
    SECRET_PATH_SESSION,
    claudeTranscript(SECRET_PATH_SESSION, cwd, [
      [`Where does the ${SECRET_PATH_WORD} deploy read its keys?`, `From aws-secret ${AWS_SECRET}`],
    ]),
  );
  return cwd;
}

/** `path` with the token as the gate shows it. */
export function shownPath(path: string): string {
  return path.replace(PATH_TOKEN, "[REDACTED:github-token]");
}

/** The secrets found in `text`, by name (none, when nothing leaked). */
export function leaks(text: string): string[] {
  return [["the token", PATH_TOKEN], ["the AWS secret key", AWS_SECRET]]
    .filter(([, secret]) => text.includes(secret!)).map(([name]) => name!);
}
