// The app shell: header with the connection state (ServerInfo, polled), settings (API key in
// sessionStorage, gateway address, board theme, sounds), language switch, and the four pages
// behind addresses that can be reloaded, shared and bookmarked:
//   #play/GAME-ID                            a game of this browser (resumed on reload)
//   #analysis?fen=FEN&moves=e2e4,e7e5&ply=N  a position and moves, the cursor at ply N
//   #review?pgn=PGN&ply=N                    a reviewed game
//   #watch/GAME-ID                           a game watched live

import "./style.css";
import { api, apiKey, describeError, gatewayUrl, saveSettings } from "./api.js";
import { START_FEN } from "./chess.js";
import { type Lang, currentLang, langListenerCount, onLang, setLang, t } from "./i18n.js";
import { AnalysisView } from "./pages/analysis-view.js";
import { PlayView } from "./pages/play-view.js";
import { ReviewView } from "./pages/review-view.js";
import { WatchView } from "./pages/watch-view.js";
import { THEMES, type Theme, setSounds, setTheme, sounds, theme } from "./settings.js";
import { followLanguage, h, tr } from "./ui.js";

const views = {
  play: new PlayView(),
  analysis: new AnalysisView(),
  review: new ReviewView(),
  watch: new WatchView(),
};
type ViewName = keyof typeof views;
for (const view of Object.values(views)) followLanguage(view.element);
// For the browser test: a growing count would be a listener leak.
(window as unknown as { chessLangListeners: () => number }).chessLangListeners = langListenerCount;

/** Changes the address without a new history entry or a hashchange (the page is there). */
function setAddress(hash: string): void {
  if (window.location.hash !== hash) history.replaceState(null, "", hash);
}

views.play.onGame = (id) => setAddress(`#play/${encodeURIComponent(id)}`);
views.watch.onWatch = (id) => {
  window.location.hash = `#watch/${encodeURIComponent(id)}`;
};
views.review.onReviewed = (pgn) => setAddress(`#review?${new URLSearchParams({ pgn })}`);
views.analysis.onNavigate = () => {
  if (!window.location.hash.startsWith("#analysis")) return;
  const c = views.analysis.ctrl;
  const q = new URLSearchParams();
  if (c.startFen !== START_FEN) q.set("fen", c.startFen);
  if (c.moves.length) q.set("moves", c.moves.join(","));
  if (c.cursor !== c.moves.length) q.set("ply", String(c.cursor));
  const query = q.toString();
  setAddress(query ? `#analysis?${query}` : "#analysis");
};

const connection = h("span", { class: "connection", "data-state": "connecting", role: "status" });
const tabs = h("nav", { class: "tabs", "aria-label": "views" });
const tabNames: Array<[ViewName, Parameters<typeof tr>[0]]> = [
  ["play", "tabPlay"],
  ["analysis", "tabAnalysis"],
  ["review", "tabReview"],
  ["watch", "tabWatch"],
];
for (const [name, key] of tabNames) tabs.append(h("a", { href: `#${name}`, "data-view": name }, tr(key)));

const langSelect = h(
  "select",
  { name: "lang", "aria-label": "Language / 语言", onchange: () => setLang(langSelect.value as Lang) },
  h("option", { value: "en" }, "English"),
  h("option", { value: "zh" }, "中文"),
);
langSelect.value = currentLang();

const themeSelect = h("select", { name: "theme", onchange: () => setTheme(themeSelect.value as Theme) });
const themeKeys: Record<Theme, Parameters<typeof tr>[0]> = { green: "themeGreen", brown: "themeBrown", contrast: "themeContrast" };
themeSelect.append(...THEMES.map((name) => h("option", { value: name }, tr(themeKeys[name]))));
themeSelect.value = theme();
const soundsBox = h("input", { type: "checkbox", name: "sounds", checked: sounds(), onchange: () => setSounds(soundsBox.checked) });
const keyInput = h("input", { type: "password", name: "apikey", autocomplete: "off", value: apiKey() });
const gatewayInput = h("input", { type: "url", name: "gateway", autocomplete: "off", value: gatewayUrl(), placeholder: window.location.origin });
const settings = h(
  "details",
  { class: "settings" },
  h("summary", {}, tr("settings")),
  h(
    "form",
    {
      onsubmit: (e: Event) => {
        e.preventDefault();
        saveSettings(keyInput.value, gatewayInput.value);
        settings.open = false;
        void checkConnection();
      },
    },
    h("label", {}, tr("apiKey"), keyInput),
    h("small", {}, tr("apiKeyHint")),
    h("label", {}, tr("gateway"), gatewayInput),
    h("small", {}, tr("gatewayHint")),
    h("label", {}, tr("theme"), themeSelect),
    h("label", { class: "inline" }, soundsBox, tr("sounds")),
    h("button", { type: "submit", name: "save" }, tr("save")),
  ),
);

const title = h("h1", {}, tr("title"));
const main = h("main");
document.body.prepend(h("header", {}, title, tabs, h("div", { class: "header-right" }, connection, langSelect, settings)), main);

onLang(() => {
  document.title = t("title");
  renderConnection();
});

let connected: "connecting" | "connected" | "disconnected" = "connecting";
let version = "";
let lastError = "";

function renderConnection(): void {
  connection.dataset.state = connected;
  connection.textContent =
    connected === "connected" ? `● ${t("connected")} · ${t("version")} ${version}` : connected === "connecting" ? t("connecting") : `● ${t("disconnected")}`;
  connection.title = lastError;
}

let firstView = true;
async function checkConnection(): Promise<void> {
  try {
    const info = await api().gateway.serverInfo({}, { timeoutMs: 5000 });
    connected = "connected";
    version = info.version;
    lastError = "";
    if (info.authRequired && !apiKey()) settings.open = true;
  } catch (e) {
    connected = "disconnected";
    lastError = describeError(e);
  }
  renderConnection();
  if (firstView) {
    firstView = false;
    performance.mark("chess-first-view");
    document.body.dataset.ready = "true";
  }
}

function route(): void {
  const hash = window.location.hash.replace(/^#\/?/, "");
  const [path, query = ""] = hash.split("?", 2);
  const [name, arg] = path.split("/");
  const params = new URLSearchParams(query);
  const ply = params.has("ply") ? Number(params.get("ply")) : undefined;
  const view: ViewName = name in views ? (name as ViewName) : "play";
  main.replaceChildren(views[view].element);
  for (const a of tabs.querySelectorAll("a")) {
    if (a.dataset.view === view) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
  const id = arg ? decodeURIComponent(arg) : undefined;
  // Every page hears whether it is shown; the one shown gets its address's arguments.
  views.play.show(view === "play", view === "play" ? id : undefined);
  views.watch.show(view === "watch", view === "watch" ? id : undefined);
  views.review.show(view === "review", view === "review" ? params.get("pgn") ?? undefined : undefined, ply);
  if (view === "analysis") {
    const moves = params.get("moves");
    views.analysis.show(true, params.get("fen") ?? (moves ? START_FEN : undefined), moves ? moves.split(",") : undefined, ply);
  } else views.analysis.show(false);
}

window.addEventListener("hashchange", route);
route();
void checkConnection();
// Notices a lost connection (and its return) within a few seconds.
function poll(): void {
  setTimeout(async () => {
    await checkConnection();
    poll();
  }, connected === "connected" ? 5000 : 2000);
}
poll();
