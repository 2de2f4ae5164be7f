// The Chat Archive in Chromium: an admin and a linked non-admin read a room, a thread, search with
// from: and jump to the hit, jump to a date; markup in a message stays text; a room outside the
// non-admin's set cannot be opened by URL.
import type { Locator, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sampleArchive, tempDir, writeArchive } from "../helpers/chat-archive.ts";
import { type E2E, startE2E } from "./harness.ts";

const LONG = 800;

describe("chat archive in the browser", () => {
  let e: E2E;
  beforeAll(async () => {
    // Beside the sample, a long private room: 800 messages half an hour apart from 2025-06-01.
    const docs = sampleArchive();
    const bob = { _id: "U_bob", username: "bob", name: "Bob Baker" };
    const long = Array.from({ length: LONG }, (_, i) => {
      const ts = new Date(Date.UTC(2025, 5, 1, 0, 15) + i * 30 * 60_000);
      return { _id: `L${i}`, rid: "R_long", msg: `Long room message ${i}`, ts, u: bob, _updatedAt: ts };
    });
    docs.rocketchat_room!.push({
      _id: "R_long",
      t: "p",
      name: "long-room",
      fname: "long-room",
      msgs: LONG,
      _updatedAt: long.at(-1)!.ts,
    });
    docs.rocketchat_message!.push(...long);
    // A room whose first message is late in the evening in Los Angeles, already the next day in UTC.
    const late = [
      { _id: "LATE1", msg: "Late stock count done", ts: new Date("2025-11-14T07:30:00Z") }, // 13 Nov 23:30 PST
      { _id: "LATE2", msg: "Morning delivery in", ts: new Date("2025-11-15T18:00:00Z") }, // 15 Nov 10:00 PST
    ].map((m) => ({ ...m, rid: "R_late", u: bob, _updatedAt: m.ts }));
    docs.rocketchat_room!.push({
      _id: "R_late",
      t: "c",
      name: "late-shift",
      fname: "late-shift",
      msgs: late.length,
      lm: late.at(-1)!.ts,
      _updatedAt: late.at(-1)!.ts,
    });
    docs.rocketchat_message!.push(...late);
    const dir = writeArchive(tempDir(), docs);
    e = await startE2E({ CHAT_SOURCE_DIR: dir, DEMO_DATA: "0" });
    await e.t.app.services.dataOps.start("chat", null);
    await e.t.app.services.dataOps.idle();
    const alice = await e.t.tdb.db.prisma.chatUser.findUniqueOrThrow({ where: { mongoId: "U_alice" } });
    const id = await e.t.createUser("alice.staff", ["access:chat"]);
    await e.t.tdb.db.prisma.user.update({ where: { id }, data: { rocketChatUserId: alice.id } });
    await e.t.createUser("nolink", ["access:chat"]);
  }, 90_000);
  afterAll(() => e?.close());

  it("admin: reads a room safely, opens a thread, searches from: and jumps to the hit, jumps to a date", async () => {
    const { page } = await e.newPage();
    await e.signIn(page, "admin");
    await page.goto("/chat");
    await page.locator('[data-testid=room][data-room-id="R_general"]').click();
    await expect.poll(() => page.url()).toContain("room=R_general");
    const html = page.locator('[data-message-id="M_html"]');
    await html.waitFor();
    // Markup is text: nothing ran, no element was made from it, the javascript: link is no link.
    const text = html.getByTestId("message-text");
    expect(await text.innerText()).toContain("<script>window.__xss=1</script>");
    expect(await text.locator("script, img").count()).toBe(0);
    expect(await text.locator("a").count()).toBe(0);
    expect(await page.locator("img[onerror]").count()).toBe(0);
    expect(await page.evaluate(() => (window as unknown as { __xss?: number }).__xss)).toBeUndefined();
    const link = page.locator('[data-message-id="M_price"] a[href="https://example.com/prices"]');
    expect(await link.getAttribute("rel")).toBe("noopener noreferrer");
    expect(await link.getAttribute("target")).toBe("_blank");
    // Reactions, edited marker, system messages in one line, image and a missing file.
    expect(await page.locator('[data-message-id="M_price"] [data-testid=reaction]').innerText()).toContain(
      "2",
    );
    expect(await page.locator('[data-message-id="M_edit"]').innerText()).toContain("(edited)");
    expect(await page.locator("[data-testid=system-line]").first().innerText()).toContain("alice joined");
    await page.locator('[data-message-id="M_file"] img').waitFor();
    expect(
      await page.locator('[data-message-id="M_missing"] [data-testid=file-missing]').innerText(),
    ).toContain("did not contain this file");

    await page.getByRole("button", { name: "2 replies" }).click();
    const thread = page.getByTestId("thread-panel");
    await thread.getByText("Confirmed, ordering tomorrow").waitFor();
    expect(await thread.getByText("Shipment arrived").count()).toBe(1);
    await thread.getByRole("button", { name: "Close thread" }).click();

    await page.getByTestId("chat-search").fill("from:bob glue");
    await page.getByRole("button", { name: "Search", exact: true }).click();
    const hit = page.locator("[data-testid=search-hit]");
    await hit.first().waitFor();
    expect(await hit.count()).toBe(1);
    expect(await hit.locator("mark").innerText()).toBe("glue");
    await hit.click();
    await expect.poll(() => page.url()).toContain("msg=M_dm");
    const dm = page.locator('[data-message-id="M_dm"]');
    await dm.waitFor();
    expect(await dm.getAttribute("class")).toContain("ring-2");
    expect(await page.getByTestId("room-title").innerText()).toBe("bob, carol");

    await page.locator('[data-testid=room][data-room-id="R_general"]').click();
    await page.getByRole("button", { name: "Jump to date" }).click();
    const day = page.locator('[data-testid=date-jump] [data-day="2025-03-01"] button');
    // Only days with messages can be picked.
    expect(await page.locator('[data-testid=date-jump] [data-day="2025-03-02"] button').isDisabled()).toBe(
      true,
    );
    await day.click();
    await expect.poll(() => page.url()).toContain("date=2025-03-01");
    await page.locator('[data-message-id="M_price"]').waitFor();
  });

  it("a linked non-admin reads their rooms, searches, and cannot open a room outside their set by URL", async () => {
    const { page } = await e.newPage({ width: 390, height: 844 });
    await e.signIn(page, "alice.staff");
    await page.goto("/chat");
    const rooms = page.locator("[data-testid=room]");
    await rooms.first().waitFor();
    expect(
      (await rooms.evaluateAll((els) => els.map((el) => el.getAttribute("data-room-id")))).sort(),
    ).toEqual(["R_buyers", "R_disc", "R_general"]);

    await page.goto("/chat?room=U_bobU_carol");
    await page
      .getByRole("alert")
      .getByText(/not found/)
      .waitFor();
    expect(await page.locator("[data-testid=message]").count()).toBe(0);

    await page.goto("/chat?room=R_general");
    await page.getByRole("button", { name: "2 replies" }).click();
    await page.getByTestId("thread-panel").getByText("Confirmed, ordering tomorrow").waitFor();
    await page.getByRole("button", { name: "Close thread" }).click();

    await page.getByTestId("chat-search").fill("from:bob glue");
    await page.getByRole("button", { name: "Search", exact: true }).click();
    await page.getByText("No messages match.").waitFor();
    await page.getByTestId("chat-search").fill("from:alice glue");
    await page.getByRole("button", { name: "Search", exact: true }).click();
    await page.locator("[data-testid=search-hit]").first().click();
    await expect.poll(() => page.url()).toContain("msg=M_price");
    await page.locator('[data-message-id="M_price"]').waitFor();
  });

  it("scrolls back through a long room without jumping, and jumps to the reader's own day", async () => {
    const { page } = await e.newPage({ timezoneId: "America/Los_Angeles" });
    await e.signIn(page, "admin");
    await page.goto("/chat?room=R_long");
    const scroller = page.getByTestId("message-scroller");
    await page.locator(`[data-message-id="L${LONG - 1}"]`).waitFor();
    // Each time the top is reached an older page goes above; past 12 pages the newest page goes
    // (at most 600 messages stay). The message that was at the top stays in view every time.
    for (let i = 0; i < 14; i++) {
      const top = await scroller.evaluate((el) => {
        el.scrollTop = 0;
        return el.querySelector("[data-message-id]")!.getAttribute("data-message-id")!;
      });
      await expect
        .poll(() =>
          scroller.evaluate((el) => el.querySelector("[data-message-id]")!.getAttribute("data-message-id")),
        )
        .not.toBe(top);
      // Let any further load (a jump would set one off) settle before looking.
      await page.waitForTimeout(300);
      const view = await scroller.evaluate((el, id) => {
        const box = el.getBoundingClientRect();
        const node = el.querySelector(`[data-message-id="${id}"]`)!.getBoundingClientRect();
        return {
          inView: node.top >= box.top - 1 && node.top < box.bottom,
          loaded: el.querySelectorAll("[data-message-id]").length,
        };
      }, top);
      expect(view.inView, `round ${i}: ${top} left the view`).toBe(true);
      expect(view.loaded).toBeLessThanOrEqual(600);
    }

    // 2025-06-10 in Los Angeles starts at 07:00 UTC: the first message of that day is L446
    // (07:15 UTC, 00:15 there), under the day's own separator, not the evening before's.
    await page.goto("/chat?room=R_long&date=2025-06-10");
    const hit = page.locator('[data-message-id="L446"]');
    await hit.waitFor();
    expect(await hit.getAttribute("class")).toContain("ring-2");
    expect(await hit.evaluate((el) => el.closest("section")!.getAttribute("aria-label"))).toMatch(/June 10/);
    // Every message has a link of its own to copy.
    await hit.hover();
    await hit.getByTestId("copy-message-link").waitFor();
  });

  /** Signs in, opens room R_late and its jump-to-date calendar with its days loaded. */
  async function openLateRoomCalendar(page: Page): Promise<Locator> {
    await e.signIn(page, "admin");
    await page.goto("/chat?room=R_late");
    await page.locator('[data-message-id="LATE2"]').waitFor();
    await page.getByRole("button", { name: "Jump to date" }).click();
    const calendar = page.getByTestId("date-jump");
    await calendar.getByText("Underlined days have messages.").waitFor();
    return calendar;
  }
  const isUnderlined = async (cell: Locator) =>
    ((await cell.getAttribute("class")) ?? "").split(/\s+/).includes("underline");

  it("the calendar marks the reader's own days: a message at 23:30 in Los Angeles is on that day", async () => {
    const { page } = await e.newPage({ timezoneId: "America/Los_Angeles" });
    // The calendar opens on the room's last month, November 2025, with its days loaded.
    const calendar = await openLateRoomCalendar(page);
    const cell = (day: string) => calendar.locator(`[data-day="${day}"]`);
    const state = async (day: string) => ({
      underlined: await isUnderlined(cell(day)),
      pickable: !(await cell(day).locator("button").isDisabled()),
    });
    // 07:30 UTC on 14 November is 23:30 on the 13th here: the 13th is marked, the 14th is not.
    expect(await state("2025-11-13")).toEqual({ underlined: true, pickable: true });
    expect(await state("2025-11-14")).toEqual({ underlined: false, pickable: false });
    expect(await state("2025-11-15")).toEqual({ underlined: true, pickable: true });
    await cell("2025-11-13").locator("button").click();
    await expect.poll(() => page.url()).toContain("date=2025-11-13");
    const hit = page.locator('[data-message-id="LATE1"]');
    await hit.waitFor();
    expect(await hit.getAttribute("class")).toContain("ring-2");
    expect(await hit.innerText()).toContain("Late stock count done");
    expect(await hit.evaluate((el) => el.closest("section")!.getAttribute("aria-label"))).toMatch(
      /November 13/,
    );
  });

  it("a browser time zone the server does not know: the calendar shows UTC days and says so", async () => {
    const { page } = await e.newPage({ timezoneId: "America/Los_Angeles" });
    // The browser's zone reaches the server as one it does not know (as an old or unusual setting
    // would): it answers 400 naming tz.
    await page.route(/\/trpc\/[^?]*chat\.days/, (route) =>
      route.continue({
        url: route
          .request()
          .url()
          .replace(/America(%2F|\/)Los_Angeles/g, "Mars$1Olympus"),
      }),
    );
    const calendar = await openLateRoomCalendar(page);
    expect(await calendar.getByTestId("date-jump-utc").innerText()).toContain(
      "Days in UTC: the server does not know this browser's time zone (America/Los_Angeles).",
    );
    // 07:30 UTC on 14 November is on the 14th in UTC.
    expect(await isUnderlined(calendar.locator('[data-day="2025-11-14"]'))).toBe(true);
  });

  it("a user without a linked chat user is told why nothing shows", async () => {
    const { page } = await e.newPage();
    await e.signIn(page, "nolink");
    await page.goto("/chat");
    expect(await page.getByTestId("chat-access-notice").innerText()).toMatch(/not linked to a chat user/);
  });
});
