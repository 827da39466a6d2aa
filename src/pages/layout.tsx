import type { Context } from "hono";
import type { Child, FC, PropsWithChildren } from "hono/jsx";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { FAVICON_PATH } from "../docs/favicon";
import type { PageEnv } from "../http/page-security";

// The pages' one stylesheet: a constant, sent inline under the page's nonce (the pages load nothing else).
const STYLE = `
body { font-family: system-ui, sans-serif; max-width: 44rem; margin: 2rem auto; padding: 0 1rem; line-height: 1.5; color: #1d1d1f; }
h1 { font-size: 1.5rem; } h2 { font-size: 1.15rem; margin-top: 2rem; }
label { display: block; margin: 0.5rem 0; }
input[type=email], input[type=password], input[type=text], select { display: block; width: 100%; max-width: 24rem; padding: 0.4rem; font: inherit; }
button { font: inherit; padding: 0.35rem 0.9rem; margin: 0.25rem 0.5rem 0.25rem 0; cursor: pointer; }
table { border-collapse: collapse; width: 100%; font-size: 0.9rem; } th, td { text-align: left; padding: 0.3rem 0.5rem; border-bottom: 1px solid #ddd; vertical-align: top; }
.message { padding: 0.6rem 0.8rem; border-radius: 4px; background: #eef4ff; } .problem { background: #fdecea; }
.secret { font-family: ui-monospace, monospace; background: #f4f4f6; padding: 0.5rem; word-break: break-all; }
.muted { color: #666; font-size: 0.9rem; } .inline { display: inline; }
`;

/** The one layout of the service's pages: title, the stylesheet under this response's nonce, the content. */
const Layout: FC<PropsWithChildren<{ title: string; nonce: string }>> = ({ title, nonce, children }) => (
  <html lang="en">
    <head>
      <meta charset="utf-8" />
      <meta name="viewport" content="width=device-width, initial-scale=1" />
      <title>{title}</title>
      <link rel="icon" href={FAVICON_PATH} type="image/svg+xml" />
      {/* A constant stylesheet, never data: as text its quotes would be escaped. */}
      <style nonce={nonce} dangerouslySetInnerHTML={{ __html: STYLE }} />
    </head>
    <body>
      <main>{children}</main>
    </body>
  </html>
);

/** A message above a form: what happened, or (problem) what went wrong and how to go on. */
export const Message: FC<{ text: string | undefined; problem?: boolean }> = ({ text, problem }) =>
  text ? (
    <p class={problem ? "message problem" : "message"} role={problem ? "alert" : "status"}>
      {text}
    </p>
  ) : null;

/**
 * Answers a page: HTML escaped by hono/jsx throughout, never stored by a cache (pages show secrets and
 * personal data), under this request's page policy (its nonce is in the layout).
 */
export async function renderPage(c: Context<PageEnv>, status: ContentfulStatusCode, title: string, content: Child): Promise<Response> {
  const page = (
    <Layout title={title} nonce={c.get("cspNonce")}>
      {content}
    </Layout>
  );
  return c.html(`<!doctype html>\n${await page.toString()}`, status, { "cache-control": "no-store" });
}
