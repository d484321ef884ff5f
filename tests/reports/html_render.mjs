// Loads a report.html in headless Chromium and says what a person would see: whether every chart
// was drawn (the SVG elements, marks and axis labels in each chart's container), every console error, exception
// and policy violation the page raised, whether any injected script ran, and a full-page screenshot.
//
//   node html_render.mjs REPORT.html SCREENSHOT.png   →   one JSON object on stdout
//
// Talks the Chrome DevTools Protocol over --remote-debugging-pipe (fd 3 in, fd 4 out, messages
// separated by NUL), so it needs nothing but node and Debian's chromium. Exits 2 on a usage error,
// 3 when the browser cannot be driven (it did not start, or the page did not finish in time).
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const [page, screenshot] = process.argv.slice(2);
if (!page || !screenshot) {
  process.stderr.write("usage: node html_render.mjs REPORT.html SCREENSHOT.png\n");
  process.exit(2);
}
const browserPath = process.env.PARASIM_CHROMIUM || "chromium";
const profile = mkdtempSync(join(tmpdir(), "parasim-chromium-"));
const browser = spawn(browserPath, [
  "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
  "--disable-background-networking", "--disable-component-update", "--disable-sync",
  "--disable-dev-shm-usage", `--user-data-dir=${profile}`, "--remote-debugging-pipe", "about:blank",
], { stdio: ["ignore", "ignore", "pipe", "pipe", "pipe"], detached: true });  // its own process group, so its helpers end with it

let browserLog = "";
browser.stderr.on("data", (d) => { browserLog += d; });
// The browser's profile folder is removed once the browser and its helper processes (renderer,
// GPU, zygote: the process group it leads) have been killed and it has exited — they write there
// until then — or after 5 s at the latest.
let finishing = false;
const finish = (code, text) => {
  if (finishing) return;
  finishing = true;
  if (text) process.stdout.write(text + "\n");
  const done = () => {
    try { process.kill(-browser.pid, "SIGKILL"); } catch { /* the group is gone */ }
    try { rmSync(profile, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 }); } catch { /* best effort */ }
    process.exit(code);
  };
  if (browser.exitCode !== null || browser.signalCode !== null) return done();
  browser.once("exit", done);
  setTimeout(done, 5000);
  try { process.kill(-browser.pid, "SIGKILL"); } catch { try { browser.kill("SIGKILL"); } catch { done(); } }
};
const fail = (why) => {
  process.stderr.write(`html_render: ${why}\n${browserLog.slice(-4000)}`);
  finish(3);
};
const deadline = setTimeout(() => fail("the page did not finish within 60 s"), 60000);
browser.on("error", (e) => fail(`cannot start ${browserPath}: ${e.message}`));

const toBrowser = browser.stdio[3];
const fromBrowser = browser.stdio[4];
let nextId = 1;
const pending = new Map();
const errors = [];
let buffered = "";
fromBrowser.on("data", (chunk) => {
  buffered += chunk.toString("utf8");
  let end;
  while ((end = buffered.indexOf("\0")) >= 0) {
    const message = JSON.parse(buffered.slice(0, end));
    buffered = buffered.slice(end + 1);
    if (message.id !== undefined && pending.has(message.id)) {
      const { ok, ko } = pending.get(message.id);
      pending.delete(message.id);
      if (message.error) ko(new Error(JSON.stringify(message.error)));
      else ok(message.result);
    } else if (message.method === "Runtime.consoleAPICalled" && (message.params.type === "error" || message.params.type === "assert")) {
      errors.push("console." + message.params.type + ": " + message.params.args.map((a) => a.value ?? a.description ?? "").join(" "));
    } else if (message.method === "Runtime.exceptionThrown") {
      const d = message.params.exceptionDetails;
      errors.push("exception: " + (d.exception?.description ?? d.text));
    } else if (message.method === "Log.entryAdded" && message.params.entry.level === "error") {
      errors.push("log (" + message.params.entry.source + "): " + message.params.entry.text);
    }
  }
});
const send = (method, params = {}, sessionId) => new Promise((ok, ko) => {
  const id = nextId++;
  pending.set(id, { ok, ko });
  toBrowser.write(JSON.stringify(sessionId ? { id, method, params, sessionId } : { id, method, params }) + "\0");
});
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

try {
  const { targetId } = await send("Target.createTarget", { url: "about:blank" });
  const { sessionId } = await send("Target.attachToTarget", { targetId, flatten: true });
  const on = (method, params) => send(method, params, sessionId);
  await on("Runtime.enable");
  await on("Log.enable");
  await on("Page.enable");
  await on("Emulation.setDeviceMetricsOverride", { width: 1280, height: 900, deviceScaleFactor: 1, mobile: false });
  await on("Page.navigate", { url: pathToFileURL(resolve(page)).href });
  const evaluate = async (expression) => (await on("Runtime.evaluate", { expression, returnByValue: true })).result.value;
  // The page's own boot script marks the body once every chart has been drawn or has failed.
  let total = null;
  while (total === null) {
    await sleep(100);
    total = await evaluate("document.body ? document.body.getAttribute('data-charts-total') : null");
  }
  const seen = await evaluate(`(() => {
    const charts = Array.from(document.querySelectorAll(".vis")).map((el) => ({
      id: el.id,
      drawn: el.getAttribute("data-drawn") === "true",
      svg: el.querySelectorAll("svg").length,
      canvas: el.querySelectorAll("canvas").length,
      marks: el.querySelectorAll("svg .role-mark > path, svg .role-mark > text, svg .role-mark > line").length,
      axis_labels: Array.from(el.querySelectorAll("svg .role-axis-label text")).map((t) => t.textContent),
    }));
    return {
      title: document.title,
      total: Number(document.body.getAttribute("data-charts-total")),
      drawn: Number(document.body.getAttribute("data-charts-drawn")),
      page_errors: window.parasimErrors || [],
      injected: typeof window.parasimInjected !== "undefined",
      script_elements: document.querySelectorAll("script").length,
      charts,
    };
  })()`);
  const { cssContentSize } = await on("Page.getLayoutMetrics");
  const height = Math.min(Math.ceil(cssContentSize.height), 12000);
  await on("Emulation.setDeviceMetricsOverride", { width: 1280, height, deviceScaleFactor: 1, mobile: false });
  await sleep(200);
  const { data } = await on("Page.captureScreenshot", { format: "png" });
  writeFileSync(screenshot, Buffer.from(data, "base64"));
  seen.errors = errors;
  clearTimeout(deadline);
  // The browser may exit without answering Browser.close; a promise that never settles would then
  // be all that is left and Node would end with 13 (unsettled top-level await) before the report is
  // written (seen once in CI). At most 2 s for the answer, then finish kills the group anyway.
  await Promise.race([send("Browser.close").catch(() => {}), sleep(2000)]);
  finish(0, JSON.stringify(seen));
} catch (e) {
  fail(e.stack || String(e));
}
