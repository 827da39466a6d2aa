import type { FC } from "hono/jsx";
import { SCOPE_SENTENCES, type Scope } from "../auth/scopes";

/** Who is asking, as the consent page shows it and the grant keeps it. */
export type ClientShown = { name: string; verifiedDomain: string | undefined; redirectHost: string; redirectIsLoopback: boolean };

export type ConsentForm = { action: string; nonce: string; issued: string; csrf: string };

/**
 * The consent screen: the client's name as registered and
 * marked unverified (a metadata-document client: its domain), where its redirect goes, each scope
 * by name with its sentence, the signed-in account, and Approve or Deny. Everything the client
 * chose is text escaped by hono/jsx.
 */
export const ConsentScreen: FC<{ client: ClientShown; scopes: Scope[]; email: string; form: ConsentForm }> = ({ client, scopes, email, form }) => (
  <>
    <h1>Connect {client.name} to your Project Chat account?</h1>
    {client.verifiedDomain ? (
      <p>
        This app is published at <strong>{client.verifiedDomain}</strong>.
      </p>
    ) : (
      <p>
        <strong>{client.name}</strong> <span class="muted">(unverified: the app chose this name itself)</span>
      </p>
    )}
    <p>
      If you approve, access is sent to <strong>{client.redirectHost}</strong>.
    </p>
    {client.redirectIsLoopback ? <p class="message problem">That is an app on this computer. Approve only if you started connecting from it just now.</p> : null}
    <p>It asks to act for you in your projects:</p>
    <ul>
      {scopes.map((scope) => (
        <li>
          <code>{scope}</code>: {SCOPE_SENTENCES[scope]}
        </li>
      ))}
    </ul>
    <p>
      Signed in as <strong>{email}</strong>. <a href="/account">Not you? Sign out on your account page.</a>
    </p>
    <form method="post" action={form.action}>
      <input type="hidden" name="step" value="consent" />
      <input type="hidden" name="nonce" value={form.nonce} />
      <input type="hidden" name="issued" value={form.issued} />
      <input type="hidden" name="csrf" value={form.csrf} />
      <button type="submit" name="decision" value="approve">
        Approve
      </button>
      <button type="submit" name="decision" value="deny">
        Deny
      </button>
    </form>
    <p class="muted">You can disconnect it at any time on your account page.</p>
  </>
);
