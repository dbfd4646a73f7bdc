// The app shell: header with the connection state (ServerInfo, polled), settings (API key in
// sessionStorage, gateway address), language switch, and the four views behind hash routes
// (#play, #analysis, #review, #watch/ID).

import "./style.css";
import { AnalysisView } from "./analysis.js";
import { api, apiKey, describeError, gatewayUrl, saveSettings } from "./api.js";
import { type Lang, currentLang, onLang, setLang, t } from "./i18n.js";
import { PlayView } from "./play.js";
import { ReviewView } from "./review.js";
import { h, tr } from "./ui.js";
import { WatchView } from "./watch.js";

const views = {
  play: new PlayView(),
  analysis: new AnalysisView(),
  review: new ReviewView(),
  watch: new WatchView(),
};
type ViewName = keyof typeof views;

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
  const [name, arg] = window.location.hash.replace(/^#\/?/, "").split("/");
  const view: ViewName = name in views ? (name as ViewName) : "play";
  main.replaceChildren(views[view].element);
  for (const a of tabs.querySelectorAll("a")) {
    if (a.dataset.view === view) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
  if (view !== "watch") views.watch.stop();
  if (view === "watch" && arg) void views.watch.watch(decodeURIComponent(arg));
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
