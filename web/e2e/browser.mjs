// The web app in a real browser: Debian's Chromium driven by playwright-core against a running
// stack. Run by tests/web/main.rs (`cargo test -p chess-integration-tests --test web`), which
// starts `chess up` and a keyed gateway and passes their page addresses:
//
//   node e2e/browser.mjs --url http://127.0.0.1:PORT/ --keyed-url http://127.0.0.1:PORT/ \
//     --key KEY --shots ../target/debug/web-shots
//
// Prints one line `RESULT {json}` with the timings; exits non-zero on the first failed step.

import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";

const args = Object.fromEntries(
  process.argv.slice(2).reduce((pairs, word, i, all) => (word.startsWith("--") && word !== "--keep-going" ? [...pairs, [word.slice(2), all[i + 1]]] : pairs), []),
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
// --keep-going: a failed step is reported and the next one runs (to see which checks an older
// page fails); the script still exits non-zero.
const keepGoing = process.argv.includes("--keep-going");
const failedSteps = [];
const step = async (name, body) => {
  const t0 = Date.now();
  process.stdout.write(`step ${name} ... `);
  try {
    await body();
  } catch (e) {
    if (!keepGoing) throw e;
    failedSteps.push(name);
    console.log(`FAILED: ${String(e?.message ?? e).split("\n")[0]}`);
    return;
  }
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

  const myTurn = async (plies) => {
    await page.waitForFunction(
      (n) => Number(document.querySelector(".play .moves")?.dataset.count ?? 0) >= n &&
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
      await board.locator(`[data-square="${from}"]`).click();
    }
    throw new Error("no legal move found by clicking");
  };
  const drag = async (p, board, from, to) => {
    const a = await p.locator(`[data-board="${board}"] [data-square="${from}"]`).boundingBox();
    const b = await p.locator(`[data-board="${board}"] [data-square="${to}"]`).boundingBox();
    await p.mouse.move(a.x + a.width / 2, a.y + a.height / 2);
    await p.mouse.down();
    await p.mouse.move(b.x + b.width / 2, b.y + b.height / 2, { steps: 6 });
    await p.mouse.up();
  };

  await step("play: start a game against the engine; its address", async () => {
    await page.selectOption('select[name="color"]', "w");
    // The form starts at a level it offers (it once started at 1600, not among them: an empty
    // choice that played at full strength).
    const level = await page.inputValue('select[name="level"]');
    assert(level === "1500", `the form starts at level 1500, not ${JSON.stringify(level)}`);
    await page.selectOption('select[name="level"]', "1100");
    await page.selectOption('select[name="tc"]', "5+3");
    await page.click('button[name="start"]');
    await page.waitForFunction(() => document.querySelector(".play .game-id")?.dataset.gameId);
    gameId = await page.locator(".play .game-id").getAttribute("data-game-id");
    await myTurn(0);
    assert(page.url().endsWith(`#play/${gameId}`), `the game's address: ${page.url()}`);
    assert(/5:00/.test(await page.locator(".play .clock").last().textContent()), "white's clock shows 5:00");
  });

  await step("watch: another tab opens the game by its id in the form; a shareable address", async () => {
    await watcher.goto(`${url}#watch`);
    await watcher.fill('input[name="game"]', gameId);
    await watcher.click('button[name="watch"]');
    await watcher.waitForSelector('.watch .status[data-state="live"]');
    assert(watcher.url().endsWith(`#watch/${gameId}`), `watch address ${watcher.url()}`);
    assert((await watcher.locator(".watch .san-input").count()) === 0, "no move field under a watched board");
    await page.bringToFront();
  });

  await step("play: clicks, drag, typed SAN (Chinese names too), the error cleared, numbered moves", async () => {
    const board = page.locator('[data-board="play"]');
    await board.locator('[data-square="e2"]').click();
    assert((await board.locator(".hint").count()) === 2, "e2 pawn hints e3 and e4");
    await board.locator('[data-square="e4"]').click();
    await myTurn(2);
    await drag(page, "play", "b1", "c3");
    await myTurn(4);
    await page.fill(".play .san-input input", "Qh8");
    await page.press(".play .san-input input", "Enter");
    assert(/Not a legal move/.test(await page.locator(".play .input-error").textContent()), "illegal move refused");
    await page.fill(".play .san-input input", "马f3");
    await page.press(".play .san-input input", "Enter");
    await myTurn(6);
    assert((await page.locator(".play .input-error").textContent()) === "", "the complaint goes with the next legal move");
    // A draw offer with the next move: the engine plays on, and the page says it declined.
    await page.click('button[name="offer"]');
    await clickSomeMove();
    await myTurn(8);
    await page.waitForSelector('.play .notice[data-declined="true"]');
    for (let ply = 10; ply <= 12; ply += 2) {
      await clickSomeMove();
      await myTurn(ply);
    }
    assert((await board.locator(".sq.last").count()) === 2, "last move highlighted");
    const numbers = await page.locator(".play .moves .number").allTextContents();
    assert(numbers.join(" ") === "1. 2. 3. 4. 5. 6.", `moves numbered per move: ${numbers}`);
    await watcher.waitForFunction(() => Number(document.querySelector(".watch .moves")?.dataset.count) >= 12, null, { polling: 100 });
    await page.screenshot({ path: join(shots, "play.png") });
  });

  await step("watch: names, the side to move, clocks counting down", async () => {
    const status = await watcher.locator(".watch .status").textContent();
    assert(/You/.test(status) && /Engine/.test(status) && /to move/.test(status), status);
    // The engine answers fast: wait until White (the person) is to move, then watch White's clock run.
    await watcher.bringToFront();
    const white = watcher.locator('.watch .clock[data-color="white"]');
    await watcher.waitForFunction(() => document.querySelector('.watch .clock[data-color="white"]')?.classList.contains("running"));
    const before = await white.textContent();
    await watcher.waitForTimeout(1200);
    const after = await white.textContent();
    assert(before !== after && /You/.test(after), `white's clock runs: ${before} -> ${after}`);
    await watcher.screenshot({ path: join(shots, "watch.png") });
    await page.bringToFront();
  });

  await step("play: the list steps back and forth; a reload resumes the game; Start asks first", async () => {
    const board = page.locator('[data-board="play"]');
    const live = await board.getAttribute("data-fen");
    await page.locator('.play .moves [data-ply="2"]').click();
    const rows = (await board.getAttribute("data-fen")).split(" ")[0].split("/");
    assert(rows[4] === "4P3" && rows[6] === "PPPP1PPP" && rows[7] === "RNBQKBNR", `the position after 1.e4 and Black's reply: ${rows}`);
    await page.keyboard.press("ArrowRight");
    assert((await page.locator(".play .moves .current").getAttribute("data-ply")) === "3", "→ steps forward");
    await page.keyboard.press("End");
    assert((await board.getAttribute("data-fen")) === live, "End: the game's position");
    await page.reload();
    await page.waitForFunction((id) => document.querySelector(".play .game-id")?.dataset.gameId === id, gameId);
    await myTurn(12);
    await page.click('button[name="start"]');
    await page.waitForSelector(".play .confirm:not([hidden])");
    await page.click('.play .confirm button[name="keep"]');
    assert((await page.locator(".play .game-id").getAttribute("data-game-id")) === gameId, "the game is kept");
  });

  await step("play: a takeback (the engine grants it in this casual game), recorded in the PGN", async () => {
    const board = page.locator('[data-board="play"]');
    const before = await board.getAttribute("data-fen");
    await page.click('button[name="takeback"]');
    await page.waitForFunction(
      () => document.querySelector(".play .moves")?.dataset.count === "10" &&
        document.querySelector(".play .status")?.dataset.turn === "me",
    );
    assert((await board.getAttribute("data-fen")) !== before, "the position went back");
    assert((await page.locator(".play .moves [data-ply]").count()) === 10, "the move and the reply left the list");
    const pgn = await page.locator(".play textarea.pgn").inputValue();
    assert(/white\s+took\s+back\s+its\s+move\s+and\s+the\s+reply\s+\(2\s+plies\)/.test(pgn), pgn);
    await watcher.waitForFunction(() => Number(document.querySelector(".watch .moves")?.dataset.count) === 10, null, { polling: 100 });
    await clickSomeMove();
    await myTurn(12);
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

  const analysisBoard = page.locator('[data-board="analysis"]');
  const setUp = async (text) => {
    await page.fill('textarea[name="position"]', text);
    await page.click('button[name="setup"]');
  };

  await step("analysis: lines arrive from AnalyzeStream; the bar is as tall as the board, with a number", async () => {
    await page.goto(`${url}#analysis`);
    await setUp("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3");
    await page.waitForFunction(() => document.querySelector('[data-board="analysis"]')?.dataset.fen?.startsWith("r1bqkbnr/pppp1ppp/2n5"));
    await page.selectOption('select[name="multipv"]', "3");
    await page.selectOption('select[name="depth"]', "12");
    await page.click('button[name="analyse"]');
    await page.waitForFunction(() => document.querySelectorAll(".lines .line").length === 3);
    await page.waitForSelector('.analysis .info[data-done="true"]', { timeout: 60_000 });
    const scores = await page.locator(".lines .line .score").allTextContents();
    assert(scores.every((s) => /^[+-]?\d+\.\d\d$|^#-?\d+$/.test(s)), `scores ${scores}`);
    assert((await page.locator(".lines .line .wdl span").count()) >= 3, "WDL bars");
    const info = await page.locator(".analysis .info").textContent();
    const [, d, sel] = /Depth (\d+)(?:\/(\d+))?/.exec(info) ?? [];
    assert(d && (!sel || Number(sel) > Number(d)), `no selective depth below the depth: ${info}`);
    const bar = await page.locator(".analysis .eval-bar").boundingBox();
    const svg = await analysisBoard.boundingBox();
    assert(Math.abs(bar.height - svg.height) <= 1, `bar ${bar.height} px, board ${svg.height} px`);
    assert(/^[+-]?\d+\.\d$|^-?M\d+$/.test(await page.locator(".analysis .eval-number").textContent()), "a number on the bar");
    assert((await page.locator('.analysis .arrow').count()) === 1, "the best move's arrow");
    await page.screenshot({ path: join(shots, "analysis.png") });
    // The first line's first move, played on the board from the line; the analysis follows.
    const before = await analysisBoard.getAttribute("data-fen");
    await page.locator(".lines .line").first().locator(".pv-move").first().click();
    await page.waitForFunction((fen) => document.querySelector('[data-board="analysis"]')?.dataset.fen !== fen, before);
    await page.waitForFunction(() => document.querySelectorAll(".lines .line").length === 3);
    assert(/moves=/.test(page.url()), `the address holds the moves: ${page.url()}`);
    await page.click('button[name="analyse"]');
    // Analyse and Stop, again and again: the labels leave no language listener behind.
    const listeners = await page.evaluate(() => window.chessLangListeners());
    for (let i = 0; i < 6; i++) await page.click('button[name="analyse"]');
    assert((await page.evaluate(() => window.chessLangListeners())) === listeners, "no listener leak");
    assert((await page.locator('button[name="analyse"]').getAttribute("aria-pressed")) === "false", "off after an even number of clicks");
  });

  await step("analysis: no depth limit runs on until stopped", async () => {
    await setUp("e4 e5 Nf3 Nc6 Bb5");
    await page.waitForFunction(() => /Opening: \S/.test(document.querySelector(".analysis .opening")?.textContent ?? ""));
    await page.selectOption('select[name="depth"]', "0");
    await page.selectOption('select[name="multipv"]', "1");
    await page.click('button[name="analyse"]');
    assert((await page.locator('button[name="analyse"]').getAttribute("aria-pressed")) === "true", "on");
    await page.waitForFunction(() => Number(document.querySelector(".analysis .info")?.dataset.depth ?? 0) >= 8);
    assert(await page.locator(".analysis .error").isHidden(), "no error");
    // Browsing restarts it on each position: ← goes back a move, and lines come for that one.
    await page.locator("body").click({ position: { x: 5, y: 5 } });
    await page.keyboard.press("ArrowLeft");
    await page.waitForFunction(() => document.querySelector('[data-board="analysis"]')?.dataset.fen?.startsWith("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R"));
    await page.waitForFunction(() => document.querySelectorAll(".lines .line").length === 1);
    assert(/ply=4/.test(page.url()), `the cursor in the address: ${page.url()}`);
    await page.click('button[name="analyse"]');
    assert((await page.locator('button[name="analyse"]').getAttribute("aria-pressed")) === "false", "stopped");
    // The address brings the same position back.
    await page.reload();
    await page.waitForFunction(() => document.querySelector('[data-board="analysis"]')?.dataset.fen?.startsWith("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R"));
    await page.waitForFunction(() => document.querySelector(".analysis .moves")?.dataset.count === "5");
  });

  await step("analysis: checkmate and stalemate said so; move numbers from the position", async () => {
    await setUp("3R2k1/5ppp/8/8/8/8/5PPP/6K1 b - - 1 17");
    await page.click('button[name="analyse"]');
    await page.waitForFunction(() => /checkmate/.test(document.querySelector(".analysis .finished")?.textContent ?? ""));
    assert((await page.locator(".lines .line").count()) === 0, "no #-0 line");
    await setUp("7k/5Q2/6K1/8/8/8/8/8 b - - 0 60");
    await page.waitForFunction(() => /stalemate/.test(document.querySelector(".analysis .finished")?.textContent ?? ""));
    await page.click('button[name="analyse"]');
    // Moves from move 16: the numbers are whole and in view.
    await setUp("4kb1r/p2n1ppp/4q3/4p1B1/4P3/1Q6/PPP2PPP/2KR4 w k - 1 16");
    await page.locator('[data-board="analysis"] [data-square="b3"]').click();
    await page.locator('[data-board="analysis"] [data-square="b8"]').click();
    await page.waitForFunction(() => document.querySelector(".analysis .moves")?.dataset.count === "1");
    const number = page.locator(".analysis .moves .number").first();
    assert((await number.textContent()) === "16.", `numbered from the position: ${await number.textContent()}`);
    const fits = await number.evaluate((n) => n.scrollWidth <= n.clientWidth && n.getBoundingClientRect().left >= n.closest("ol").getBoundingClientRect().left);
    assert(fits, "the move number is not cut off");
  });

  await step("analysis: a king dropped on its rook castles; the keyboard moves pieces", async () => {
    await setUp("r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R w KQkq - 0 1");
    await page.waitForFunction(() => document.querySelector('[data-board="analysis"]')?.dataset.fen?.startsWith("r3k2r/pppppppp"));
    await drag(page, "analysis", "e1", "h1");
    await page.waitForFunction(() => document.querySelector('[data-board="analysis"]')?.dataset.fen?.includes("/R4RK1 b"));
    // Screen reader labels, and moves by keyboard: the cursor starts on the king to move.
    const label = await analysisBoard.locator('[data-square="e8"]').getAttribute("aria-label");
    assert(label === "black king on e8", label);
    await analysisBoard.locator('[data-square="e8"]').focus();
    await page.keyboard.press("ArrowLeft");
    await page.keyboard.press("ArrowDown");
    await page.keyboard.press("Enter");
    await page.keyboard.press("ArrowDown");
    await page.keyboard.press("Enter");
    await page.waitForFunction(() => document.querySelector('[data-board="analysis"]')?.dataset.fen?.startsWith("r3k2r/ppp1pppp/3p4"));
  });

  await step("analysis: a bad FEN shows the field and the reason", async () => {
    await setUp("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNX w KQkq - 0 1");
    await page.waitForSelector(".analysis .error:not([hidden])");
    const text = await page.locator(".analysis .error").textContent();
    assert(/InvalidArgument|INVALID_ARGUMENT/i.test(text) && /field fen/.test(text), text);
    await page.screenshot({ path: join(shots, "bad-fen.png") });
  });

  await step("review: judgements, opening, the moves per number, next mistake, arrows, its address", async () => {
    await page.goto(`${url}#review`);
    await page.fill('textarea[name="pgn"]', '[White "Ann"]\n[Black "Bob"]\n\n1. e4 e5 2. Bc4 Nc6 3. Qh5 Nf6 4. Qxf7# 1-0\n');
    await page.click('button[name="review"]');
    await page.waitForSelector('.review-moves .symbol[data-symbol="??"]', { timeout: 120_000 });
    assert((await page.locator(".players tr").count()) === 3, "accuracy table");
    assert(/%/.test(await page.locator(".players .accuracy").first().textContent()), "accuracy shown");
    assert(/\$4|\?\?/.test(await page.locator(".review textarea.pgn").inputValue()), "annotated PGN");
    assert(/Opening: \S/.test(await page.locator(".review .opening").textContent()), "the opening");
    assert((await page.locator(".review .phases td[data-phase=opening]").first().textContent()).endsWith("%"), "accuracy by phase");
    assert((await page.locator(".review-moves li").count()) === 4, "four rows for seven moves");
    // The game ends in mate: the last move says so, not "#1".
    const detail = await page.locator(".review .move-detail").textContent();
    assert(/checkmate/.test(detail) && !/#1/.test(detail), detail);
    await page.click('button[name="next-mistake"]');
    const ply = Number(await page.locator(".review-moves .current").getAttribute("data-ply"));
    assert(ply > 0 && ply < 7, `next mistake at ply ${ply}`);
    assert((await page.locator('[data-board="review"] .arrow').count()) === 1, "the best move's arrow");
    await page.locator('.review-moves [data-ply="6"]').click();
    assert((await page.locator(".graph-cursor").getAttribute("x1")) !== "0", "the cursor on the graph");
    assert(/#review\?pgn=/.test(page.url()), `the review's address: ${page.url()}`);
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
    await page.goto(`${url}#analysis`);
    await setUp("e4 e5");
    await page.click('button[name="analyse"]');
    await page.waitForFunction(() => document.querySelectorAll(".lines .line").length >= 1);
    assert(await page.locator(".lines .line .wdl").first().isVisible(), "WDL bars at phone width");
    await page.click('button[name="analyse"]');
    await page.selectOption('select[name="lang"]', "en");
    await page.setViewportSize({ width: 1280, height: 860 });
  });

  await step("keyboard and settings: tabs reachable, the theme kept", async () => {
    await page.goto(`${url}#play`);
    // A fresh page: the focus starts at the top.
    await page.reload();
    await page.waitForSelector("body[data-ready]");
    for (let i = 0; i < 12; i++) {
      await page.keyboard.press("Tab");
      if (await page.evaluate(() => document.activeElement?.getAttribute("data-view") === "analysis")) break;
    }
    await page.keyboard.press("Enter");
    await page.waitForFunction(() => window.location.hash.startsWith("#analysis"));
    await page.click("details.settings summary");
    await page.selectOption('select[name="theme"]', "contrast");
    await page.reload();
    await page.waitForSelector("body[data-ready]");
    assert((await page.evaluate(() => document.documentElement.dataset.theme)) === "contrast", "theme kept");
    const fill = await analysisBoard.locator('[data-square="a1"]').evaluate((n) => getComputedStyle(n).fill);
    assert(fill === "rgb(74, 74, 74)", `high-contrast dark squares: ${fill}`);
    await page.screenshot({ path: join(shots, "contrast.png") });
    await page.evaluate(() => localStorage.removeItem("chess.theme"));
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
  assert(failedSteps.length === 0, `failed steps: ${failedSteps.join("; ")}`);
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
