// Drives the system's Chromium through herd's web view, as tests/web_e2e.rs asks:
//   node browser.mjs '{"login_url": "...", "link_url": "...", "first": "one/1/1", "shots": "DIR"}'
// Signs in with the printed address, sees both prompts, opens the first task's pane, approves
// its prompt and watches the agent go on; then, phone-sized, answers the second prompt through
// its one-time link. Prints one JSON line of what it saw; screenshots go to `shots`.
import { chromium } from "playwright-core";

const args = JSON.parse(process.argv[2]);
const CHROMIUM = process.env.HERD_CHROMIUM || "/usr/bin/chromium";
const seen = {};

const browser = await chromium.launch({
  executablePath: CHROMIUM,
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
try {
  const desktop = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  const page = await desktop.newPage();
  await page.goto(args.login_url);
  const prompts = page.locator("[data-testid=prompt]");
  await prompts.nth(1).waitFor({ timeout: 20000 });
  seen.prompts = await prompts.evaluateAll((nodes) => nodes.map((n) => n.dataset.prompt));
  seen.url_after_sign_in = page.url();
  const first = page.locator(`[data-testid=prompt][data-prompt="${args.first}"]`);
  await first.getByRole("button", { name: "Pane" }).click();
  const pane = page.locator("[data-testid=pane]");
  await pane.filter({ hasText: "touch created_by_agent.txt" }).waitFor({ timeout: 10000 });
  await page.screenshot({ path: `${args.shots}/desktop.png`, fullPage: true });
  await first.locator("[data-testid=answer-approve]").click();
  await pane.filter({ hasText: "Approved: creating" }).waitFor({ timeout: 10000 });
  seen.pane_after_approve = await pane.textContent();
  seen.answer_note = await page.locator("#answer-note").textContent();
  await page.screenshot({ path: `${args.shots}/desktop-approved.png`, fullPage: true });

  const phone = await browser.newContext({
    viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true,
  });
  const small = await phone.newPage();
  await small.goto(args.login_url);
  await small.locator("[data-testid=prompt]").first().waitFor({ timeout: 20000 });
  seen.phone_prompts = await small.locator("[data-testid=prompt]").count();
  seen.phone_overflows = await small.evaluate(() => document.documentElement.scrollWidth > window.innerWidth);
  await small.screenshot({ path: `${args.shots}/phone.png`, fullPage: true });
  await small.goto(args.link_url);
  seen.link_heading = await small.locator("[data-testid=link-heading]").textContent();
  await small.screenshot({ path: `${args.shots}/phone-link.png` });
  await small.locator("[data-testid=link-answer]").tap();
  await small.locator("[data-testid=link-heading]", { hasText: "Answered" }).waitFor({ timeout: 10000 });
  seen.link_answered = await small.locator("main").textContent();
  await small.screenshot({ path: `${args.shots}/phone-link-answered.png` });
} finally {
  await browser.close();
}
console.log(JSON.stringify(seen));
