// The page in the learner's language (run by tests/e2e/run.js): it starts in the
// browser's language (zh* -> zh-TW, else English) unless the learner chose one,
// follows the lesson panel's switch, and its own HTML (document lang and title,
// the "Lesson as text" link, the text view's controls) takes its words from the
// app's one table (src/app/page_strings.inc), as the canvas does; widget names and
// the state hook stay English. Every character of the table is in the subset
// font. Screenshots of both languages in build/e2e/i18n/ for a person to look at.
"use strict";
const assert = require("assert/strict");
const fs = require("fs");
const path = require("path");
const { ROOT, state, waitState, boxInView } = require("./lib");
const { openPage, clickWidget, noErrors } = require("./page_tests");
const { lessonFile } = require("./lesson_tests");

const list = [];
const test = (name, run) => list.push({ name, run });

async function shot(ctx, page, name) {
  const dir = path.join(ctx.shots, "i18n");
  fs.mkdirSync(dir, { recursive: true });
  await page.mouse.move(700, 2); // no tooltip in the way
  await page.waitForTimeout(150);
  await page.screenshot({ path: path.join(dir, name) });
}

const html = (page) => page.evaluate(() => ({
  lang: document.documentElement.lang,
  title: document.title,
  toggle: document.getElementById("text-view-toggle").textContent,
  close: document.getElementById("text-view-close").textContent,
  canvas: document.getElementById("canvas").getAttribute("aria-label"),
}));

const TABS = ["tab:Code", "tab:Run & parity", "tab:Observers", "tab:Signature & weights", "tab:Log"];

test("i18n: the browser's language first, then the learner's choice; the HTML's words from the app's table", async (ctx) => {
  const page = await openPage(ctx, { hash: "#m00-4/2", locale: "en-US" });
  let s = await waitState(page, (x) => x.lessons.current && x.lessons.current.step === 2, "#m00-4/2");
  assert.equal(s.lessons.lang, "en", "an English browser, no choice yet: English");
  assert.deepEqual(await html(page), { lang: "en", title: "pt2lab: the torch.export graph lab",
    toggle: "Lesson as text", close: "Close", canvas: "pt2lab graph workspace" });
  for (const t of TABS) assert.ok(s.widgets[t], `${t} is drawn`);
  await shot(ctx, page, "en-lesson.png");
  // The lesson panel's switch: the whole page follows.
  await clickWidget(page, "lesson:lang:zh-TW");
  s = await waitState(page, (x) => x.lessons.lang === "zh-TW" && x.widgets["tab:Code"], "zh-TW");
  assert.deepEqual(await html(page), { lang: "zh-TW", title: "pt2lab：torch.export 圖實驗室",
    toggle: "以文字閱讀課程", close: "關閉", canvas: "pt2lab 圖工作區" });
  // Widget names (and the state hook's tab) stay English: the tests find them in both languages.
  for (const t of TABS) assert.ok(s.widgets[t], `${t} is drawn in zh-TW`);
  await clickWidget(page, "tab:Signature & weights");
  await waitState(page, (x) => x.tab === "Signature & weights", "the Signature & weights tab");
  // The text view's controls in the same language.
  await clickWidget(page, "lesson:textview");
  await page.locator("#text-view").waitFor({ state: "visible" });
  const steps = lessonFile("m00-4", "zh-TW").steps.length;
  assert.equal(await page.locator("#text-view .counter").textContent(), `第 2 步，共 ${steps} 步`);
  assert.equal(await page.locator("#text-view-answer").textContent(), "送出答案");
  assert.match(await page.locator("#text-view .graph").textContent(), /^這張圖圖 main，以 ep\.module\(\) 顯示：共 \d+ 個節點（/);
  await clickWidget(page, "lesson:lang:en");
  await page.waitForFunction(() => document.querySelector("#text-view-answer").textContent === "Check my answer");
  assert.equal(await page.locator("#text-view .counter").textContent(), `Step 2 of ${steps}`);
  await clickWidget(page, "lesson:lang:zh-TW");
  await page.waitForFunction(() => document.querySelector("#text-view-answer").textContent === "送出答案");
  await page.locator("#text-view-close").click();
  // The choice outlives a reload in an English browser.
  await page.reload();
  s = await waitState(page, (x) => x.lessons && x.lessons.current && x.lessons.current.step === 2, "after the reload");
  assert.equal(s.lessons.lang, "zh-TW", "the learner's choice wins over the browser's language");
  assert.equal((await html(page)).toggle, "以文字閱讀課程");
  noErrors(page);
});

test("i18n: a zh browser starts in zh-TW, any other in English", async (ctx) => {
  for (const [locale, lang] of [["zh-HK", "zh-TW"], ["fr-FR", "en"]]) {
    const page = await openPage(ctx, { locale });
    const s = await state(page);
    assert.equal(s.lessons.lang, lang, `${locale}: ${lang}`);
    assert.equal((await html(page)).lang, lang);
    noErrors(page);
  }
});

test("i18n: every character of the page's words is in the subset font", async (ctx) => {
  const chars = new Set(fs.readFileSync(path.join(ctx.dist, "fonts", "chars.txt"), "utf8"));
  const table = fs.readFileSync(path.join(ROOT, "src/app/page_strings.inc"), "utf8");
  const missing = [...new Set(table)].filter((c) => c >= " " && !chars.has(c));
  assert.deepEqual(missing, [], "characters of page_strings.inc missing from fonts/chars.txt");
  assert.ok(chars.has("程") && chars.has("逐"), "the zh-TW words are in");
});

test("i18n: screenshots of the page in zh-TW and English (lesson, panels, keys overlay)", async (ctx) => {
  for (const lang of ["zh-TW", "en"]) {
    const locale = lang === "en" ? "en-US" : "zh-TW";
    const page = await openPage(ctx, { hash: "#m00-4/3", locale });
    await waitState(page, (x) => x.lessons.current && x.lessons.current.step === 3 && x.lessons.lang === lang, `${lang} #m00-4/3`);
    await clickWidget(page, "lesson:perform");
    await waitState(page, (x) => x.lessons.current.performed, "performed");
    await clickWidget(page, "tab:Run & parity");
    await shot(ctx, page, `${lang}-lesson-step.png`);
    await clickWidget(page, "help");
    await page.waitForTimeout(200);
    await shot(ctx, page, `${lang}-keys.png`);
    await clickWidget(page, "help");
    // One's own file (no lesson): the file panel, the inspector, the run and the observers.
    await clickWidget(page, "lesson:leave");
    await waitState(page, (x) => !x.lessons.current, "left the lesson");
    await clickWidget(page, "run");
    await waitState(page, (x) => x.run && x.run.current, "a run");
    const node = await boxInView(page, "batch_norm");
    await page.mouse.click(node.x, node.y);
    await waitState(page, (x) => x.selected && x.selected.name === "batch_norm", "batch_norm selected");
    await shot(ctx, page, `${lang}-file-run.png`);
    await clickWidget(page, "prepare");
    await waitState(page, (x) => x.busy === null && x.waiting === 0 && x.observers.length > 0, "prepared");
    await clickWidget(page, "tab:Observers");
    await shot(ctx, page, `${lang}-observers.png`);
    noErrors(page);
  }
});

module.exports = { list };
