// Drives the page of `faultline serve` in headless Chromium through the DevTools protocol: pastes a
// log, picks files, presses Diagnose and reads the top diagnosis from the rendered report.
// Prints one JSON object: {top, downloads, problems}.
// Usage: node serve_page.mjs URL CHROMIUM SCREENSHOT PASTE_FILE FILE...
import { readFileSync } from "node:fs";
import puppeteer from "puppeteer-core";

const [url, chromium, screenshot, pasteFile, ...files] = process.argv.slice(2);
const browser = await puppeteer.launch({
  executablePath: chromium,
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync"],
});
try {
  const page = await browser.newPage();
  // A policy violation, a script error or a failed load shows up here.
  const problems = [];
  page.on("console", (message) => {
    if (message.type() === "error" || message.type() === "warning") problems.push(message.text());
  });
  page.on("pageerror", (error) => problems.push(error.message));
  page.on("requestfailed", (request) => problems.push("failed: " + request.url()));
  await page.setViewport({ width: 1280, height: 1800 });
  await page.goto(url, { waitUntil: "load" });
  // Pasting: the text lands in the box as a paste would put it.
  await page.$eval("#log", (box, text) => {
    box.focus();
    box.value = text;
    box.dispatchEvent(new Event("input", { bubbles: true }));
  }, readFileSync(pasteFile, "utf8"));
  await (await page.$("#files")).uploadFile(...files);
  await page.click("#diagnose");
  await page.waitForFunction(() => {
    const frame = document.getElementById("result");
    return (!frame.hidden && frame.contentDocument?.querySelector(".verdict")) ||
           document.getElementById("status").textContent.startsWith("Error");
  }, { timeout: 60000 });
  const result = await page.evaluate(() => {
    const report = document.getElementById("result").contentDocument;
    const verdict = report?.querySelector(".verdict");
    return {
      status: document.getElementById("status").textContent,
      top: verdict ? (verdict.querySelector("code")?.textContent ?? "none") : null,
      downloads: report ? [...report.querySelectorAll("a[download]")].map((a) => a.download) : [],
    };
  });
  // The form and the top of the report under it: the verdict and the first diagnoses.
  await page.screenshot({ path: screenshot });
  console.log(JSON.stringify({ ...result, problems }));
} finally {
  await browser.close();
}
