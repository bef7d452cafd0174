// Page object: every read and write the end-to-end tests make goes through
// these data-testid and name hooks (part of the page's interface).

/** Waits for the app to show its first total. */
export async function ready(page) {
  await page.waitForSelector('[data-testid="peak-total"]', { timeout: 15000 });
}

/** The overall peak in exact bytes, from `data-bytes`. */
export async function peakBytes(page) {
  return BigInt(await page.getAttribute('[data-testid="peak-total"]', "data-bytes"));
}

/** Sets a form control (its `name` is its query key) as a user would. */
export async function setField(page, key, value) {
  // A choice shown as radio buttons (the task switch): click the one.
  const radio = page.locator(`input[type="radio"][name="${key}"]`);
  if ((await radio.count()) > 0) {
    await page.locator(`input[type="radio"][name="${key}"][value="${value}"]`).check();
    return;
  }
  const el = page.locator(`[name="${key}"]`);
  await ensureVisible(el);
  const kind = await el.evaluate((e) => (e.type === "checkbox" ? "checkbox" : e.tagName));
  if (kind === "SELECT") await el.selectOption(String(value));
  else if (kind === "checkbox") await el.setChecked(value === true || value === "true");
  else {
    await el.fill(String(value));
    // Search and datalist inputs commit on change.
    await el.dispatchEvent("change");
  }
}

/** Opens the <details> sections around a control so it can be used. */
export async function ensureVisible(el) {
  await el.evaluate((e) => {
    for (let d = e.closest("details"); d; d = d.parentElement?.closest("details")) d.open = true;
  });
}

/** The query string of the page's URL (for the CLI). */
export function urlQuery(page) {
  return new URL(page.url()).search.slice(1);
}

/** Waits until the peak total is exactly `bytes`. */
export async function waitPeak(page, bytes) {
  await page.waitForFunction(
    (b) => document.querySelector('[data-testid="peak-total"]')?.dataset.bytes === String(b),
    String(bytes),
  );
}

/** The attribute of a data-testid node. */
export function attr(page, testid, name) {
  return page.getAttribute(`[data-testid="${testid}"]`, name);
}

/** The current value of a form control. */
export async function fieldValue(page, key) {
  const radio = page.locator(`input[type="radio"][name="${key}"]`);
  if ((await radio.count()) > 0) return page.locator(`input[type="radio"][name="${key}"]:checked`).getAttribute("value");
  const el = page.locator(`[name="${key}"]`);
  if ((await el.getAttribute("type")) === "checkbox") return String(await el.isChecked());
  return el.inputValue();
}

/** The error text shown next to a field ('' when none). */
export async function fieldError(page, key) {
  return (await page.textContent(`[data-testid="error-${key}"]`)) || "";
}

/** The query string in the address bar, parsed. */
export function urlParams(page) {
  return new URL(page.url()).searchParams;
}

/** How many bands the chart says it drew, and how many canvas pixels are not background. */
export async function chartState(page, testid = "phase-chart") {
  return page.evaluate((id) => {
    const c = document.querySelector(`[data-testid="${id}"]`);
    if (!c) return { bands: 0, inked: 0 };
    const ctx = c.getContext("2d");
    const { data } = ctx.getImageData(0, 0, c.width, c.height);
    const [r0, g0, b0] = [data[0], data[1], data[2]];
    let inked = 0;
    for (let i = 0; i < data.length; i += 4) {
      if (Math.abs(data[i] - r0) + Math.abs(data[i + 1] - g0) + Math.abs(data[i + 2] - b0) > 30) inked++;
    }
    return { bands: Number(c.getAttribute("data-bands") || 0), inked };
  }, testid);
}

/** Whether the field of a query key is on the page. */
export async function hasField(page, key) {
  return (await page.locator(`[name="${key}"]`).count()) > 0;
}
