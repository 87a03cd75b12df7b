// The dashboard in a real browser (headless Chromium through playwright-core): open the printed
// URL, search with the keyboard, click a hit, page the conversation to its end, copy its resume
// command, fork it and see the fork among its project's sessions, rename it, see the status.
// Screenshots of each page go to tests/artifacts/. Skipped, saying why, without Chromium.

import assert from "node:assert/strict";
import { join } from "node:path";
import { loadContext } from "../../lib/context.ts";
import { stageMarkersFromEnv } from "../../lib/stage_markers.ts";
import { serveDashboard } from "../../servers/dashboard.ts";
import { ROOT } from "../_helpers.ts";
import { capturedWorld, TOKEN } from "./_dashboard.ts";

const CHROMIUM = "/usr/lib/chromium/chromium";
const ARTIFACTS = join(ROOT, "tests", "artifacts");

type Playwright = typeof import("playwright-core");

/** playwright-core and Chromium, or why the test cannot run here. */
async function browser(): Promise<{ playwright: Playwright } | { missing: string }> {
  try {
    if (!Deno.statSync(CHROMIUM).isFile) return { missing: `no Chromium at ${CHROMIUM}` };
  } catch {
    return { missing: `no Chromium at ${CHROMIUM} (apt-get install -y chromium)` };
  }
  try {
    return { playwright: await import("playwright-core") };
  } catch (err) {
    return {
      missing: `playwright-core cannot be loaded: ${(err as Error).message.split("\n")[0]}`,
    };
  }
}

const found = await browser();
const NAME =
  "a browser opens the printed URL, searches, opens a hit, pages to the end and forks it";

Deno.test({
  name: "playwright" in found ? NAME : `${NAME} (skipped: ${found.missing})`,
  ignore: !("playwright" in found),
  async fn(t) {
    const { chromium } = (found as { playwright: Playwright }).playwright;
    await Deno.mkdir(ARTIFACTS, { recursive: true });
    const world = await capturedWorld();
    const dashboard = serveDashboard({
      ctx: loadContext({ env: world.env }),
      hostname: "127.0.0.1",
      port: 0,
      token: TOKEN,
      markers: stageMarkersFromEnv(world.env),
    });
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: [
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    });
    try {
      const page = await browser.newPage();
      const problems: string[] = [];
      page.on("console", (message) => {
        if (message.type() === "error") problems.push(message.text());
      });
      page.on("pageerror", (err) => problems.push(err.message));
      const outside: string[] = [];
      page.on("request", (request) => {
        if (!request.url().startsWith(dashboard.url)) outside.push(request.url());
      });

      await t.step("the printed URL sets the cookie and drops the token", async () => {
        await page.goto(dashboard.urlWithToken);
        assert.equal(page.url(), dashboard.url);
        assert.equal(await page.getByRole("heading", { level: 1 }).textContent(), "Search");
        const cookies = await page.context().cookies();
        assert.equal(cookies.length, 1);
        assert.equal(cookies[0]!.httpOnly, true);
        assert.equal(cookies[0]!.sameSite, "Strict");
      });

      await t.step("/ focuses the search box; Enter searches", async () => {
        await page.locator("body").press("/");
        const box = page.getByRole("searchbox", { name: /Search text/ });
        assert.equal(await box.evaluate((el) => el === el.ownerDocument.activeElement), true);
        await box.fill("marmot keyring");
        await box.press("Enter");
        await page.getByRole("status").filter({ hasText: "Matches 1 to 2" }).waitFor();
        assert.equal(await page.locator("li.hit mark").first().textContent(), "marmot");
        await page.screenshot({ path: join(ARTIFACTS, "dashboard-search.png"), fullPage: true });
      });

      await t.step("a click opens the conversation at the hit", async () => {
        await page.locator("li.hit a[href^='/conversations/']").first().click();
        await page.getByRole("heading", {
          level: 1,
          name: "tundra-mosaic: nightly export batching",
        })
          .waitFor();
        const target = page.locator("article.rec:target");
        assert.equal(await target.count(), 1);
        assert.match((await target.textContent()) ?? "", /marmot keyring/);
        const copy = page.getByRole("button", { name: "Copy" });
        assert.equal(await copy.isVisible(), true, "the script ran under the policy");
        await page.screenshot({ path: join(ARTIFACTS, "dashboard-conversation.png") });
      });

      await t.step("from the start, ten records a page, to the end", async () => {
        await page.getByRole("link", { name: /Start of the conversation/ }).first().click();
        await page.getByLabel("Records per page").selectOption("10");
        await page.getByRole("button", { name: "Show" }).click();
        let pages = 1;
        const seen = new Set<string>();
        while (true) {
          for (
            const id of await page.locator("article.rec").evaluateAll((els) => els.map((e) => e.id))
          ) {
            seen.add(id);
          }
          const next = page.getByRole("link", { name: "Next page →" }).first();
          if (await next.count() === 0) break;
          await next.click();
          pages++;
        }
        assert.equal(pages, 4);
        assert.equal(seen.size, 40);
        assert.equal(await page.getByText("End of the conversation").first().isVisible(), true);
        await page.screenshot({ path: join(ARTIFACTS, "dashboard-conversation-end.png") });
      });

      await t.step("the resume command copies; without a clipboard it is selected", async () => {
        // Located by what it copies: its name changes to say what happened.
        const copy = page.locator("button[data-copy-for='resume-cmd']");
        const command = await page.locator("#resume-cmd").textContent();
        await copy.click();
        await copy.filter({ hasText: /^(Copied|Selected: press Ctrl\+C)$/ }).waitFor();
        if (await copy.textContent() === "Copied") {
          // A browser without the clipboard API (or refusing it) gets the fallback.
          await page.evaluate(
            "Object.defineProperty(navigator, 'clipboard', { value: undefined })",
          );
          await copy.filter({ hasText: /^Copy$/ }).waitFor();
          await copy.click();
          await copy.filter({ hasText: "Selected: press Ctrl+C" }).waitFor();
        }
        assert.equal(await page.evaluate("getSelection().toString()"), command);
      });

      await t.step(
        "fork from the conversation page; the fork is listed with its project",
        async () => {
          await page.getByRole("button", { name: "Fork into a logbook session" }).click();
          await page.getByRole("heading", { level: 1, name: "Sessions" }).waitFor();
          const notice = page.getByRole("status").filter({
            hasText: "Forked into a new logbook session",
          });
          await notice.waitFor();
          assert.match(
            (await notice.textContent()) ?? "",
            /“tundra-mosaic: nightly export batching \(fork\)”. Continue it with cd \/home\/dev\/src\/alpha && logbook resume [0-9a-f-]{36}/,
          );
          assert.equal(
            await page.getByLabel("Project directory").inputValue(),
            "/home/dev/src/alpha",
          );
          const first = page.locator("li.session").first();
          assert.match(
            (await first.locator(".meta-line").textContent()) ?? "",
            /^logbook · .* · forked from claude:f332cca8-0b9a-4244-835f-c44f31385301$/,
          );
          assert.equal(
            await first.locator("[id^='title-']").textContent(),
            "tundra-mosaic: nightly export batching (fork)",
          );
          const original = page.locator("li.session").filter({
            hasText: "claude --resume f332cca8-0b9a-4244-835f-c44f31385301",
          });
          assert.equal(await original.count(), 1, "the source conversation is listed too");
          assert.equal(await original.getByRole("button", { name: "Rename" }).count(), 0);
        },
      );

      await t.step("rename the fork on the sessions page", async () => {
        const first = page.locator("li.session").first();
        await first.getByLabel("New title").fill("export batching, continued");
        await first.getByRole("button", { name: "Rename" }).click();
        await page.getByRole("status").filter({
          hasText: "Renamed to “export batching, continued”",
        })
          .waitFor();
        assert.equal(
          await page.locator("li.session").first().locator("[id^='title-']").textContent(),
          "export batching, continued",
        );
        await page.screenshot({ path: join(ARTIFACTS, "dashboard-sessions.png"), fullPage: true });
      });

      await t.step("the status page", async () => {
        await page.getByRole("link", { name: "Status" }).click();
        await page.getByRole("heading", { level: 1, name: "Status" }).waitFor();
        assert.equal(await page.getByText("Capture is on").isVisible(), true);
        await page.screenshot({ path: join(ARTIFACTS, "dashboard-status.png"), fullPage: true });
      });

      assert.deepEqual(problems, [], "no script error and no policy violation");
      assert.deepEqual(outside, [], "nothing is loaded from anywhere else");
    } finally {
      await browser.close();
      await dashboard.shutdown();
      await world.cleanup();
    }
  },
});
