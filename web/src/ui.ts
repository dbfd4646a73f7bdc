// DOM helpers shared by the views.

import { describeError } from "./api.js";
import { type Key, onLang, t } from "./i18n.js";
import { type OpeningInfo, type Outcome, Outcome_Result, Outcome_Rule } from "./gen/chess/v1/common_pb.js";

export { scoreCp, scoreText } from "./format.js";

type Child = Node | string | null | undefined | false;

/** Creates an element: `h("button", { class: "x", onclick: f }, "text")`. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, unknown> = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") {
      node.addEventListener(key.slice(2), value as EventListener);
    } else if (key in node && typeof value !== "string") {
      (node as unknown as Record<string, unknown>)[key] = value;
    } else {
      node.setAttribute(key, value === true ? "" : String(value));
    }
  }
  for (const child of children) {
    if (child !== null && child !== undefined && child !== false) node.append(child);
  }
  return node;
}

/** Text that follows the language: a label marked with its key, which one language listener
 * (below) rewrites in every registered part of the page. It subscribes nothing itself, so
 * labels made again and again (the Analyse/Stop button) leave nothing behind. */
export function tr(key: Key): HTMLSpanElement {
  return h("span", { "data-i18n": key }, t(key));
}

const labelRoots = new Set<ParentNode>();

/** A part of the page whose labels follow the language even while it is not shown. */
export function followLanguage(root: ParentNode): void {
  labelRoots.add(root);
}

onLang(() => {
  if (typeof document === "undefined") return;
  for (const root of [document, ...labelRoots]) {
    for (const node of root.querySelectorAll<HTMLElement>("[data-i18n]")) node.textContent = t(node.dataset.i18n as Key);
  }
});

/** An error box: shows the API error (code, message, each bad field), or hides. */
export class ErrorBox {
  readonly element = h("div", { class: "error", role: "alert", hidden: true });

  show(error: unknown): void {
    this.element.hidden = false;
    this.element.replaceChildren(h("strong", {}, `${t("error")}: `), h("pre", {}, describeError(error)));
  }

  clear(): void {
    this.element.hidden = true;
    this.element.replaceChildren();
  }
}

/** FIDE Laws article of each ending rule. */
const RULES: Record<number, [Key, string]> = {
  [Outcome_Rule.CHECKMATE]: ["checkmate", "5.1.1"],
  [Outcome_Rule.RESIGNATION]: ["resignation", "5.1.2"],
  [Outcome_Rule.TIMEOUT]: ["timeout", "6.9"],
  [Outcome_Rule.STALEMATE]: ["stalemate", "5.2.1"],
  [Outcome_Rule.DEAD_POSITION]: ["deadPosition", "5.2.2"],
  [Outcome_Rule.AGREEMENT]: ["agreement", "5.2.3"],
  [Outcome_Rule.THREEFOLD_REPETITION]: ["threefold", "9.2"],
  [Outcome_Rule.FIVEFOLD_REPETITION]: ["fivefold", "9.6.1"],
  [Outcome_Rule.FIFTY_MOVES]: ["fifty", "9.3"],
  [Outcome_Rule.SEVENTY_FIVE_MOVES]: ["seventyFive", "9.6.2"],
  [Outcome_Rule.TIMEOUT_VS_INSUFFICIENT_MATERIAL]: ["timeoutVsInsufficient", "6.9"],
};

export function ruleText(rule: Outcome_Rule): string {
  const entry = RULES[rule];
  return entry ? `${t(entry[0])} (FIDE ${entry[1]})` : "";
}

export function outcomeText(outcome: Outcome): string {
  const result =
    outcome.result === Outcome_Result.WHITE_WINS
      ? t("whiteWins")
      : outcome.result === Outcome_Result.BLACK_WINS
        ? t("blackWins")
        : t("draw");
  // The rules service adds why after the rule's name: a dead position's or an opponent's
  // inability to mate, from the winnability analysis (English).
  const why = outcome.description.indexOf("): ");
  const detail = why >= 0 ? ` · ${outcome.description.slice(why + 3)}` : "";
  return `${outcome.pgnResult} · ${result} · ${ruleText(outcome.rule)}${detail}`;
}

/** "dead position" or "cannot be won by White/Black" from a quick Winnability answer's code
 * (`--`, `W-`, `-B`, with `?` for undecided), or empty. */
export function winnabilityText(code: string): string {
  if (code === "--") return t("deadPosition");
  const parts: string[] = [];
  if (code[0] === "-") parts.push(t("cannotWinWhite"));
  if (code[1] === "-") parts.push(t("cannotWinBlack"));
  return parts.join(" · ");
}

export function download(name: string, text: string): void {
  const url = URL.createObjectURL(new Blob([text], { type: "application/x-chess-pgn" }));
  const a = h("a", { href: url, download: name });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

export async function copy(text: string, button: HTMLButtonElement): Promise<void> {
  try {
    await navigator.clipboard.writeText(text);
    const before = button.textContent;
    button.textContent = t("copied");
    setTimeout(() => (button.textContent = before), 1200);
  } catch {
    // Clipboard refused (no permission): the text stays selectable in its box.
  }
}

/** `C41 Philidor Defense · open` (with "gambit" when it is one), or empty before any name. */
export function openingText(o: OpeningInfo): string {
  if (!o.name && !o.eco) return "";
  return [`${t("opening")}: ${[o.eco, o.name].filter((x) => x).join(" ")}`, o.class, o.gambit ? "gambit" : ""].filter((x) => x).join(" · ");
}
