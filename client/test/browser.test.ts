// The portable cases in headless Chromium: a page of the Worker's origin (its OpenAPI document) imports the client's
// TypeScript, compiled as it is asked for, and calls the Worker as a same-origin web app would.
import { readFileSync } from "node:fs";
import { resolve, sep } from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";
import ts from "typescript";
import { afterAll, beforeAll, describe, inject, it } from "vitest";
// @ts-expect-error: the project's scripts are JavaScript
import { freePort } from "../../scripts/lib.mjs";
import { cases } from "./portable.ts";

const clientDir = resolve(import.meta.dirname, "..");
const base = inject("base");
let browser: Browser;
let page: Page;
let hangingRequests = 0;
let refused: string;
const pageErrors: string[] = [];

// The client's one dependency, served from its package as a bundler would bring it in.
const PARSER = "eventsource-parser";
const parserDir = resolve(import.meta.dirname, "../../node_modules", PARSER, "dist");

/**
 * A client module as the browser gets it: its TypeScript compiled alone, the imports left as they are (the routes serve
 * .ts paths) but the dependency's, which names where the page serves it.
 */
function moduleOf(pathname: string): string | undefined {
  const file = resolve(clientDir, pathname.slice("/__client/".length));
  if (!file.startsWith(clientDir + sep) || !file.endsWith(".ts")) return undefined;
  const compiled = ts.transpileModule(readFileSync(file, "utf8"), { compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ES2022 } }).outputText;
  return compiled.replaceAll(`from "${PARSER}"`, `from "/__modules/${PARSER}/index.js"`);
}

/** A file of the dependency's built package (its modules import each other by relative paths). */
function dependencyFile(pathname: string): string | undefined {
  const file = resolve(parserDir, pathname.slice(`/__modules/${PARSER}/`.length));
  return file.startsWith(parserDir + sep) && file.endsWith(".js") ? readFileSync(file, "utf8") : undefined;
}

beforeAll(async () => {
  refused = `http://127.0.0.1:${await freePort()}`;
  // Every host name but the loopback address fails to resolve: the page needs nothing from the internet.
  browser = await chromium.launch({ executablePath: inject("chromium"), args: ["--no-sandbox", "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"] });
  page = await browser.newPage();
  page.on("pageerror", (error) => pageErrors.push(error.message));
  const ours = (prefix: string) => (url: URL) => url.origin === base && url.pathname.startsWith(prefix);
  await page.route(ours("/__client/"), (route) => {
    const body = moduleOf(new URL(route.request().url()).pathname);
    return body === undefined ? route.fulfill({ status: 404 }) : route.fulfill({ contentType: "text/javascript", body });
  });
  await page.route(ours(`/__modules/${PARSER}/`), (route) => {
    const body = dependencyFile(new URL(route.request().url()).pathname);
    return body === undefined ? route.fulfill({ status: 404 }) : route.fulfill({ contentType: "text/javascript", body });
  });
  // Taken and never answered: the server that hangs.
  await page.route(ours("/__hang/"), () => {
    hangingRequests++;
  });
  await page.exposeFunction("hangingRequests", () => hangingRequests);
  const engine = String(await page.evaluate("navigator.userAgent"));
  if (!engine.includes("HeadlessChrome/")) throw new Error(`not Chromium: ${engine}`);
  const document = await page.goto(`${base}/v1/openapi.json`);
  if (!document?.ok()) throw new Error(`the Worker's page: ${document?.status()}`);
  await page.evaluate(`import("/__client/test/portable.ts").then((module) => { globalThis.portable = module; })`);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  if (pageErrors.length) throw new Error(`errors in the page:\n${pageErrors.join("\n")}`);
});

describe("the client in Chromium", () => {
  for (const name of Object.keys(cases)) {
    it(name, async () => {
      const env = { base, adminToken: inject("adminToken"), hanging: `${base}/__hang`, refused };
      await page.evaluate(`portable.cases[${JSON.stringify(name)}]({ ...${JSON.stringify(env)}, hangingRequests: () => globalThis.hangingRequests() })`);
    });
  }
});
