import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../env";

export const FAVICON_PATH = "/favicon.svg";

// A speech bubble: the pages link it, and /favicon.ico answers it too for browsers that ask there anyway (a JSON view).
const FAVICON = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><path d="M6 4h20a4 4 0 0 1 4 4v12a4 4 0 0 1-4 4H14l-7 6v-6H6a4 4 0 0 1-4-4V8a4 4 0 0 1 4-4z" fill="#2f5fd0"/><path d="M9 11h14M9 17h9" stroke="#fff" stroke-width="2.5" stroke-linecap="round"/></svg>`;

/** Serves the icon of the front door and the API reference. */
export function mountFavicon(app: OpenAPIHono<AppEnv>) {
  for (const path of [FAVICON_PATH, "/favicon.ico"]) {
    app.get(path, (c) => c.body(FAVICON, 200, { "content-type": "image/svg+xml", "cache-control": "public, max-age=86400" }));
  }
}
