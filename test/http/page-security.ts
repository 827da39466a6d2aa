import { expect } from "vitest";

/** The directives of a Content-Security-Policy header, by name. */
export function cspOf(headers: Headers): Map<string, string> {
  const header = headers.get("content-security-policy");
  expect(header, "Content-Security-Policy").toBeTruthy();
  return new Map(
    header!
      .split(";")
      .map((d) => d.trim())
      .filter(Boolean)
      .map((d) => [d.split(/\s+/)[0]!, d.slice(d.indexOf(" ") + 1)] as [string, string]),
  );
}

/**
 * What every HTML page sends: never framed, no sniffing, no Referer, nothing loaded from
 * another origin; its inline style or script carries the policy's nonce. Returns the policy for page-specific checks.
 */
export function expectPageSecurity(r: { headers: Headers; text: string }) {
  const csp = cspOf(r.headers);
  expect(csp.get("frame-ancestors")).toBe("'none'");
  expect(csp.get("base-uri")).toBe("'none'");
  expect(csp.get("default-src")).toBe("'none'");
  expect(r.headers.get("x-content-type-options")).toBe("nosniff");
  expect(r.headers.get("referrer-policy")).toBe("no-referrer");
  for (const [name, value] of csp) expect(value, name).not.toMatch(/https?:|\*/);
  const nonce = [...csp.values()].join(" ").match(/'nonce-([^']+)'/)?.[1];
  if (nonce) {
    const inline = [...r.text.matchAll(/<(script|style)(?![^>]*\bsrc=)[^>]*>/g)].map((m) => m[0]);
    expect(inline.length).toBeGreaterThan(0);
    for (const tag of inline) expect(tag).toContain(`nonce="${nonce}"`);
  }
  expect(r.text).not.toMatch(/(src|href|action)="(https?:)?\/\//);
  return csp;
}
