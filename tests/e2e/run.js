// pt2lab's browser tests: the built dist/ served from 127.0.0.1, Debian's
// Chromium headless (WebGL2 via SwiftShader) driven by playwright-core, real
// input (mouse, keys, drops, the file picker), and assertions on the page's
// state hook against what the pt2lab CLI says about the same files.
// Screenshots of every panel go to build/e2e/, one per lesson step to build/e2e/lessons/.
//   node tests/e2e/run.js [dist] [name-filter]
"use strict";
const fs = require("fs");
const path = require("path");
const { ROOT, serve, launch } = require("./lib");
const tests = {
  list: [
    ...require("./page_tests").list,
    ...require("./lesson_tests").list,
    ...require("./a11y_tests").list,
    ...require("./harden_tests").list,
    ...require("./job_tests").list,
    ...require("./static_host_tests").list,
    ...require("./i18n_tests").list,
    ...require("./phone_tests").list,
    ...require("./teacher_tests").list,
    ...require("./python_tests").list,
    ...require("./preview_tests").list,
    ...require("./course_pt2e_tests").list,
  ],
};

async function main() {
  const dist = path.resolve(process.argv[2] || path.join(ROOT, "dist"));
  const filter = process.argv[3] || "";
  if (!fs.existsSync(path.join(dist, "index.html"))) throw new Error(`${dist}/index.html missing: run scripts/build_web.sh`);
  const shots = path.join(ROOT, "build", "e2e");
  fs.mkdirSync(shots, { recursive: true });
  const server = await serve(dist);
  const browser = await launch();
  let failed = 0, ran = 0;
  try {
    for (const t of tests.list) {
      if (filter && !t.name.includes(filter)) continue;
      ran++;
      const t0 = Date.now();
      const ctx = { server, browser, dist, shots, pages: [] };
      try {
        await t.run(ctx);
        console.log(`ok     ${t.name}  (${((Date.now() - t0) / 1000).toFixed(1)}s)`);
      } catch (e) {
        failed++;
        console.log(`FAILED ${t.name}: ${e && e.stack ? e.stack : e}`);
      } finally {
        for (const p of ctx.pages) await p.context().close().catch(() => {});
      }
    }
  } finally {
    await browser.close();
    server.close();
  }
  if (ran === 0) throw new Error("no test matched " + JSON.stringify(filter));
  console.log(`${ran - failed} of ${ran} browser tests passed; screenshots in ${path.relative(ROOT, shots)}/`);
  process.exit(failed ? 1 : 0);
}

main().catch((e) => {
  console.error(e && e.stack ? e.stack : e);
  process.exit(1);
});
