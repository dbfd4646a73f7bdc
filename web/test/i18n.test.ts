import assert from "node:assert/strict";
import { test } from "node:test";
import { langListenerCount, localSan, onLang, pieceLabel, setLang, t } from "../src/i18n.js";

test("labels in both languages, and SAN with Chinese piece names", () => {
  setLang("en");
  assert.equal(t("tabPlay"), "Play");
  assert.equal(localSan("Nxe5+"), "Nxe5+");
  assert.equal(pieceLabel("w", "n", "f3"), "white knight on f3");
  setLang("zh");
  assert.equal(t("tabPlay"), "对弈");
  assert.equal(localSan("Nxe5+"), "马xe5+");
  assert.equal(localSan("O-O"), "O-O");
  assert.equal(localSan("Kf1"), "王f1");
  assert.equal(localSan("Qb8+", "en"), "Qb8+");
  setLang("en");
});

test("language listeners are removed when their owner lets go (no leak)", () => {
  const before = langListenerCount();
  let calls = 0;
  const stop = onLang(() => calls++);
  assert.equal(calls, 1, "called at once");
  setLang("zh");
  assert.equal(calls, 2, "called on a change");
  stop();
  setLang("en");
  assert.equal(calls, 2, "not called after stop");
  assert.equal(langListenerCount(), before);
});
