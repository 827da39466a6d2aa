import { exports } from "cloudflare:workers";
import { answerOf } from "../helpers";

export const ORIGIN = "https://service.test";

/**
 * A browser as the pages meet it: it keeps the cookies it is given (per name, dropping cleared
 * ones), sends them back, posts forms url-encoded, and never follows redirects, so a test sees each.
 */
export class Browser {
  readonly cookies = new Map<string, string>();
  // Every Set-Cookie line received, as sent, for checking attributes.
  readonly setCookies: string[] = [];

  constructor(private readonly origin = ORIGIN) {}

  async request(method: "GET" | "POST", path: string, form?: Record<string, string | string[]>, headers: Record<string, string> = {}) {
    const init: RequestInit = { method, headers: { ...headers, ...(this.cookies.size ? { cookie: this.cookieHeader() } : {}) }, redirect: "manual" };
    if (form) {
      init.body = new URLSearchParams(Object.entries(form).flatMap(([name, value]) => [value].flat().map((v) => [name, v]))).toString();
      (init.headers as Record<string, string>)["content-type"] = "application/x-www-form-urlencoded";
    }
    const response = await exports.default.fetch(new Request(new URL(path, this.origin), init));
    for (const line of response.headers.getSetCookie()) {
      this.setCookies.push(line);
      const [pair, ...attributes] = line.split(";");
      const [name, value] = [pair!.slice(0, pair!.indexOf("=")).trim(), pair!.slice(pair!.indexOf("=") + 1).trim()];
      if (value === "" || attributes.some((a) => /^\s*max-age=0\s*$/i.test(a))) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return answerOf(response);
  }

  get = (path: string, headers?: Record<string, string>) => this.request("GET", path, undefined, headers);
  post = (path: string, form: Record<string, string | string[]>, headers?: Record<string, string>) => this.request("POST", path, form, headers);

  private cookieHeader = () => [...this.cookies].map(([name, value]) => `${name}=${value}`).join("; ");
}

/** The value of a form field in a page (hono/jsx writes name before value). */
export function field(html: string, name: string): string {
  const match = html.match(new RegExp(`name="${name}" value="([^"]*)"`));
  if (!match) throw new Error(`no field ${name} in the page:\n${html.slice(0, 2000)}`);
  return match[1]!.replaceAll("&amp;", "&");
}

/** The text of a page without its tags, for checking what a person reads. */
export const textOf = (html: string) =>
  html
    .replace(/<style[\s\S]*?<\/style>/g, "")
    .replace(/<[^>]+>/g, " ")
    .replace(/\s+/g, " ")
    .replaceAll("&lt;", "<")
    .replaceAll("&gt;", ">")
    .replaceAll("&quot;", '"')
    .replaceAll("&#39;", "'")
    .replaceAll("&amp;", "&");
