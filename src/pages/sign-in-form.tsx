import type { Context } from "hono";
import type { FC } from "hono/jsx";
import { SignInRequest } from "../auth/schemas";
import { signIn } from "../auth/sign-in";
import type { AppEnv } from "../env";
import { signInFormTokenValid } from "./form-token";
import { Message } from "./layout";
import { startPageSession } from "./session";

/** The sign-in form of the service's pages; it posts to `action` (the page it is on), never to an address a parameter names. */
export const SignInForm: FC<{ action: string; csrf: string; email?: string; problem?: string; hidden?: Record<string, string> }> = (props) => (
  <form method="post" action={props.action}>
    <Message text={props.problem} problem />
    <input type="hidden" name="csrf" value={props.csrf} />
    {Object.entries(props.hidden ?? {}).map(([name, value]) => (
      <input type="hidden" name={name} value={value} />
    ))}
    <label>
      Email
      <input type="email" name="email" autocomplete="username" required value={props.email ?? ""} />
    </label>
    <label>
      Password
      <input type="password" name="password" autocomplete="current-password" required />
    </label>
    <button type="submit">Sign in</button>
  </form>
);

const EMAIL_MAX = SignInRequest.shape.email.maxLength!;

export type PageSignIn = { kind: "signed_in" } | { kind: "problem"; status: 400 | 401 | 429; message: string; email: string };

/**
 * A posted sign-in form: its CSRF token, then the same checks and throttle as POST /auth/token; a
 * success puts a fresh session in the pages' cookie. Problems are sentences for the page.
 */
export async function signInFromForm<E extends AppEnv>(c: Context<E>, form: Record<string, unknown>): Promise<PageSignIn> {
  const email = typeof form.email === "string" ? form.email.slice(0, EMAIL_MAX) : "";
  const password = typeof form.password === "string" ? form.password : "";
  if (!(await signInFormTokenValid(c, form.csrf))) {
    return { kind: "problem", status: 400, message: "This form has expired (or came from another site). Sign in again.", email };
  }
  // POST /auth/token's bounds; the email is cut to them first, as the page shows it back.
  const input = SignInRequest.safeParse({ email, password });
  if (!input.success) return { kind: "problem", status: 400, message: "Enter your email and password.", email };
  const outcome = await signIn(c.env, input.data, c.req.header("cf-connecting-ip"));
  if (outcome.kind === "limited") {
    const minutes = Math.ceil(outcome.retryAfterSeconds / 60);
    return { kind: "problem", status: 429, message: `Too many failed sign-ins for this email from here. Try again in ${minutes} minute${minutes === 1 ? "" : "s"}.`, email };
  }
  if (outcome.kind === "wrong") return { kind: "problem", status: 401, message: "The email or password is wrong.", email };
  await startPageSession(c, outcome.token, outcome.expiresAt);
  return { kind: "signed_in" };
}
