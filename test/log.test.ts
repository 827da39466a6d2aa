import { describe, expect, it } from "vitest";
import { describeForLog, innermostMessage } from "../src/log";

describe("describeForLog", () => {
  it("tells the innermost message, never the wrapper's bound parameters", () => {
    const d1 = new Error("UNIQUE constraint failed: accounts.email");
    const wrapped = new Error("Failed query: insert into accounts values (?) params: secret@example.com", { cause: d1 });
    expect(innermostMessage(wrapped)).toBe(d1.message);
    const told = describeForLog(wrapped);
    expect(told.split("\n")[0]).toBe("Error: UNIQUE constraint failed: accounts.email");
    expect(told).not.toContain("secret@example.com");
  });

  it("keeps a thrown non-error to its first line, at most 300 characters", () => {
    expect(describeForLog(`${"x".repeat(400)}\nsecond line`)).toBe("x".repeat(300));
  });
});
