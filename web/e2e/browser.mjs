// The web app in a real browser: Debian's Chromium driven by playwright-core against a running
// stack. Run by tests/web/main.rs (`cargo test -p chess-integration-tests --test web`), which
// starts `chess up` and a keyed gateway and passes their page addresses:
//
//   node e2e/browser.mjs --url http://127.0.0.1:PORT/ --keyed-url http://127.0.0.1:PORT/ \
//     --key KEY --shots ../docs/web
//
// Prints one line `RESULT {json}` with the timings; exits non-zero on the first failed step.

import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";

const args = Object.fromEntries(
  process.argv.slice(2).reduce((pairs, word, i, all) => (word.startsWith("--") ? [...pairs, [word.slice(2), all[i + 1]]] : pairs), []),
);
const url = args.url;
const keyedUrl = args["keyed-url"];
const key = args.key;
const shots = args.shots;
if (!url || !shots) {
  console.error("usage: browser.mjs --url URL [--keyed-url URL --key KEY] --shots DIR");
  process.exit(2);
}
mkdirSync(shots, { recursive: true });

const started = Date.now();
const timings = {};
const step = async (name, body) => {
  const t0 = Date.now();
  process.stdout.write(`step ${name} ... `);
  await body();
  timings[name] = Date.now() - t0;
  console.log(`ok (${timings[name]} ms)`);
};
const assert = (condition, message) => {
  if (!condition) throw new Error(`assertion failed: ${message}`);
};

const profile = mkdtempSync(join(tmpdir(), "chess-web-chromium-"));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
  headless: true,
  viewport: { width: 1280, height: 860 },
  args: [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
  ],
});
context.setDefaultTimeout(30_000);
const pageErrors = [];
const watchErrors = (page, name) => {
  page.on("pageerror", (e) => pageErrors.push(`${name}: ${e.message}`));
};

let failed = null;
try {
  const page = context.pages()[0] ?? (await context.newPage());
  watchErrors(page, "main");

  await step("first view", async () => {
    await page.goto(url);
    await page.waitForSelector("body[data-ready]");
    const firstView = await page.evaluate(() => performance.getEntriesByName("chess-first-view")[0]?.startTime ?? -1);
    timings.firstViewMs = Math.round(firstView);
    assert(firstView > 0 && firstView < 1000, `first view in ${firstView} ms (limit 1000 ms)`);
    const status = page.locator(".connection");
    assert((await status.getAttribute("data-state")) === "connected", `connected: ${await status.textContent()}`);
    assert(/\d+\.\d+\.\d+/.test(await status.textContent()), "version shown");
    assert((await page.locator('[data-board="play"] [data-square]').count()) === 64, "64 squares");
    assert((await page.locator('[data-board="play"] use.piece').count()) === 32, "32 pieces");
  });

  let gameId = "";
  const watcher = await context.newPage();
  watchErrors(watcher, "watch");
  const playMoves = () => page.locator(".play .moves li span").filter({ hasText: /\S/ }).count();

  const myTurn = async (plies) => {
    await page.waitForFunction(
      (n) => document.querySelectorAll(".play .moves li span").length >= 0 &&
        [...document.querySelectorAll(".play .moves li span")].filter((s) => s.textContent.trim()).length >= n &&
        document.querySelector(".play .status")?.dataset.turn === "me",
      plies,
    );
  };
  /** Plays some legal move by clicking: a piece, then the first square it hints at. */
  const clickSomeMove = async () => {
    const board = page.locator('[data-board="play"]');
    const pieces = await board.locator('use.piece[data-piece^="w"]').evaluateAll((nodes) => nodes.map((n) => n.dataset.on));
    for (const from of pieces) {
      await board.locator(`[data-square="${from}"]`).click();
      const hints = await board.locator(".hint").evaluateAll((nodes) => nodes.map((n) => n.dataset.target));
      if (hints.length > 0) {
        await board.locator(`[data-square="${hints[0]}"]`).click();
        if (await page.locator(".promotion:not([hidden])").count()) await page.click('.promotion [data-promotion="q"]');
        return `${from}${hints[0]}`;
      }
    }
    throw new Error("no legal move found by clicking");
  };

  await step("play: start a game against the engine", async () => {
    await page.selectOption('select[name="color"]', "w");
    await page.selectOption('select[name="level"]', "800");
    await page.selectOption('select[name="tc"]', "5+3");
    await page.click('button[name="start"]');
    await page.waitForFunction(() => document.querySelector(".play .game-id")?.dataset.gameId);
    gameId = await page.locator(".play .game-id").getAttribute("data-game-id");
    await myTurn(0);
    assert(/5:00/.test(await page.locator(".play .clock").last().textContent()), "white's clock shows 5:00");
  });

  await step("watch: another tab opens the game by id", async () => {
    await watcher.goto(`${url}#watch/${gameId}`);
    await watcher.waitForSelector('.watch .status[data-state="live"]');
    // The playing tab in front again (a tab behind gets its animation frames throttled).
    await page.bringToFront();
  });

  await step("play: moves by clicking squares and by typing SAN", async () => {
    const board = page.locator('[data-board="play"]');
    await board.locator('[data-square="e2"]').click();
    assert((await board.locator(".hint").count()) === 2, "e2 pawn hints e3 and e4");
    await board.locator('[data-square="e4"]').click();
    await myTurn(2);
    await watcher.waitForFunction(() => Number(document.querySelector(".watch .moves")?.dataset.count) >= 2, null, { polling: 100 });
    // Drag a piece: the knight from b1 to c3.
    const from = await board.locator('[data-square="b1"]').boundingBox();
    const to = await board.locator('[data-square="c3"]').boundingBox();
    await page.mouse.move(from.x + from.width / 2, from.y + from.height / 2);
    await page.mouse.down();
    await page.mouse.move(to.x + to.width / 2, to.y + to.height / 2, { steps: 8 });
    await page.mouse.up();
    await myTurn(4);
    await page.fill('.play .san-input input', "Nf3");
    await page.press('.play .san-input input', "Enter");
    await myTurn(6);
    for (let ply = 8; ply <= 12; ply += 2) {
      await clickSomeMove();
      await myTurn(ply);
    }
    const last = await board.locator(".sq.last").count();
    assert(last === 2, "last move highlighted");
    await watcher.waitForFunction(() => Number(document.querySelector(".watch .moves")?.dataset.count) >= 12, null, { polling: 100 });
    await page.screenshot({ path: join(shots, "play.png") });
    await watcher.screenshot({ path: join(shots, "watch.png") });
  });

  await step("play: resign, the result and its rule, the PGN", async () => {
    await page.click('button[name="resign"]');
    await page.waitForSelector('.play .result[data-outcome="0-1"]');
    const result = await page.locator(".play .result").textContent();
    assert(/resignation/.test(result) && /FIDE 5\.1\.2/.test(result), result);
    const pgn = await page.locator(".play textarea.pgn").inputValue();
    assert(/\[Result "0-1"\]/.test(pgn) && /1\. e4/.test(pgn), pgn);
    await watcher.waitForFunction(() => document.querySelector(".watch .status")?.dataset.state === "over", null, { polling: 100 });
    await page.screenshot({ path: join(shots, "play-result.png") });
  });
  await watcher.close();

  await step("analysis: lines arrive from AnalyzeStream", async () => {
    await page.goto(`${url}#analysis`);
    await page.fill('textarea[name="position"]', "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3");
    await page.click('button[name="setup"]');
    await page.waitForFunction(() => document.querySelector('[data-board="analysis"]')?.dataset.fen?.startsWith("r1bqkbnr/pppp1ppp/2n5"));
    await page.selectOption('select[name="multipv"]', "3");
    await page.selectOption('select[name="depth"]', "12");
    await page.click('button[name="analyse"]');
    await page.waitForFunction(() => document.querySelectorAll(".lines .line").length === 3);
    await page.waitForSelector('.analysis .info[data-done="true"]', { timeout: 60_000 });
    const scores = await page.locator(".lines .line .score").allTextContents();
    assert(scores.every((s) => /^[+-]?\d+\.\d\d$|^#-?\d+$/.test(s)), `scores ${scores}`);
    assert((await page.locator(".lines .line .wdl span").count()) >= 3, "WDL bars");
    await page.screenshot({ path: join(shots, "analysis.png") });
    // The first line's first move, played on the board from the line.
    const before = await page.locator('[data-board="analysis"]').getAttribute("data-fen");
    await page.locator(".lines .line").first().locator(".pv-move").first().click();
    await page.waitForFunction((fen) => document.querySelector('[data-board="analysis"]')?.dataset.fen !== fen, before);
  });

  await step("analysis: a bad FEN shows the field and the reason", async () => {
    await page.fill('textarea[name="position"]', "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNX w KQkq - 0 1");
    await page.click('button[name="setup"]');
    await page.waitForSelector(".analysis .error:not([hidden])");
    const text = await page.locator(".analysis .error").textContent();
    assert(/InvalidArgument|INVALID_ARGUMENT/i.test(text) && /field fen/.test(text), text);
    await page.screenshot({ path: join(shots, "bad-fen.png") });
  });

  await step("review: judgements for a short PGN", async () => {
    await page.goto(`${url}#review`);
    await page.fill(
      'textarea[name="pgn"]',
      '[White "Ann"]\n[Black "Bob"]\n\n1. e4 e5 2. Bc4 Nc6 3. Qh5 Nf6 4. Qxf7# 1-0\n',
    );
    await page.click('button[name="review"]');
    await page.waitForSelector('.review-moves .symbol[data-symbol="??"]', { timeout: 120_000 });
    const rows = await page.locator(".players tr").count();
    assert(rows === 3, "accuracy table");
    assert(/%/.test(await page.locator(".players .accuracy").first().textContent()), "accuracy shown");
    assert(/\$4|\?\?/.test(await page.locator(".review textarea.pgn").inputValue()), "annotated PGN");
    await page.locator('.review-moves li[data-ply="6"] button').click();
    await page.screenshot({ path: join(shots, "review.png"), fullPage: true });
  });

  await step("Chinese labels and phone width", async () => {
    await page.selectOption('select[name="lang"]', "zh");
    await page.goto(`${url}#play`);
    const tab = await page.locator('nav a[data-view="play"]').textContent();
    assert(tab === "对弈", tab);
    assert((await page.locator('select[name="level"] option').last().textContent()) === "全力", "level names");
    await page.screenshot({ path: join(shots, "play-zh.png") });
    await page.setViewportSize({ width: 390, height: 844 });
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert(overflow <= 0, `no horizontal scrolling at phone width (${overflow} px over)`);
    await page.screenshot({ path: join(shots, "phone.png"), fullPage: true });
    await page.selectOption('select[name="lang"]', "en");
    await page.setViewportSize({ width: 1280, height: 860 });
  });

  await step("keyboard: the tabs and the move field are reachable", async () => {
    await page.goto(`${url}#play`);
    for (let i = 0; i < 12; i++) {
      await page.keyboard.press("Tab");
      if (await page.evaluate(() => document.activeElement?.getAttribute("data-view") === "analysis")) break;
    }
    await page.keyboard.press("Enter");
    await page.waitForFunction(() => window.location.hash === "#analysis");
  });

  if (keyedUrl) {
    await step("API key: asked for, kept in session storage, sent as a header", async () => {
      const keyed = await context.newPage();
      watchErrors(keyed, "keyed");
      const sent = [];
      keyed.on("request", (r) => {
        if (r.method() === "POST") sent.push(r.headers()["authorization"] ?? "");
      });
      await keyed.goto(`${keyedUrl}#analysis`);
      await keyed.waitForSelector("body[data-ready]");
      // Without a key the API answers UNAUTHENTICATED, shown as such.
      await keyed.fill('textarea[name="position"]', "8/8/8/8/8/8/8/K6k w - - 0 1");
      await keyed.click('button[name="setup"]');
      await keyed.waitForSelector(".analysis .error:not([hidden])");
      assert(/Unauthenticated|UNAUTHENTICATED/i.test(await keyed.locator(".analysis .error").textContent()), "unauthenticated shown");
      if (!(await keyed.locator("details.settings").getAttribute("open"))) await keyed.click("details.settings summary");
      await keyed.fill('input[name="apikey"]', key);
      await keyed.click('button[name="save"]');
      await keyed.click('button[name="setup"]');
      await keyed.waitForFunction(() => document.querySelector('[data-board="analysis"]')?.dataset.fen?.startsWith("8/8/8/8"));
      assert((await keyed.evaluate(() => sessionStorage.getItem("chess.apiKey"))) === key, "key in sessionStorage");
      assert((await keyed.evaluate(() => localStorage.getItem("chess.apiKey"))) === null, "key not in localStorage");
      assert(!keyed.url().includes(key), "key not in the URL");
      assert(sent.includes(`Bearer ${key}`), "key sent as a Bearer token");
      await keyed.close();
    });
  }

  assert(pageErrors.length === 0, `errors in the page: ${pageErrors.join("; ")}`);
} catch (e) {
  failed = e;
  console.log("FAILED");
  console.error(e?.stack ?? String(e));
  for (const p of context.pages()) {
    await p.screenshot({ path: join(shots, `failure-${context.pages().indexOf(p)}.png`) }).catch(() => {});
  }
} finally {
  await context.close();
  rmSync(profile, { recursive: true, force: true });
}
timings.totalMs = Date.now() - started;
console.log(`RESULT ${JSON.stringify(timings)}`);
process.exit(failed ? 1 : 0);
