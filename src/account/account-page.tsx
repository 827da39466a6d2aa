import type { FC } from "hono/jsx";
import type { ApiTokenItem } from "../auth/api-tokens";
import { SCOPE_SENTENCES, SCOPES } from "../auth/scopes";
import type { StatementItem } from "../credits/statement";
import type { ConnectedApp } from "../oauth/grants";
import { Message } from "../pages/layout";

/** Lifetimes a new token may have, in days; the first is the default. */
export const TOKEN_DAYS = [30, 7, 90, 365] as const;

/** What the account page shows, read fresh for each answer. */
export type AccountView = {
  email: string;
  balance: number | null;
  statement: (StatementItem & { projectName: string | null })[];
  tokens: ApiTokenItem[];
  apps: ConnectedApp[];
};

/** The forms' CSRF tokens, each bound to the session and to what its form does. */
export type AccountForms = {
  signOut: string;
  create: { nonce: string; csrf: string };
  revokeToken: Map<string, string>;
  revokeApp: Map<string, string>;
  limitToken: Map<string, string>;
  limitApp: Map<string, string>;
};

const when = (time: string | null) => (time ? `${time.slice(0, 16).replace("T", " ")} UTC` : "never");

const RevokeButton: FC<{ action: string; csrf: string }> = ({ action, csrf }) => (
  <form method="post" action={action} class="inline">
    <input type="hidden" name="csrf" value={csrf} />
    <button type="submit">Revoke</button>
  </form>
);

/** A credential's spend, and a form that sets its credit limit (a number) or removes it (empty). */
const CreditLimitCell: FC<{ action: string; csrf: string; creditLimit: number | null; creditsUsed: number }> = ({ action, csrf, creditLimit, creditsUsed }) => (
  <form method="post" action={action} class="inline">
    <input type="hidden" name="csrf" value={csrf} />
    {creditsUsed} used of{" "}
    <input
      type="number"
      name="creditLimit"
      min={1}
      max={1_000_000_000}
      step={1}
      value={creditLimit === null ? "" : String(creditLimit)}
      placeholder="no limit"
      aria-label="Credit limit"
    />{" "}
    <button type="submit">Set limit</button>
  </form>
);

const Credits: FC<{ view: AccountView }> = ({ view }) => (
  <section>
    <h2>Credits</h2>
    <p>
      Balance: <strong>{view.balance ?? 0}</strong> credits. Each task the agent runs in your projects takes its cost from here.
    </p>
    {view.statement.length === 0 ? (
      <p class="muted">Nothing has moved your balance yet.</p>
    ) : (
      <table>
        <thead>
          <tr>
            <th>When</th>
            <th>Kind</th>
            <th>Credits</th>
            <th>Balance after</th>
            <th>Project</th>
          </tr>
        </thead>
        <tbody>
          {view.statement.map((entry) => (
            <tr>
              <td>{when(entry.createdAt)}</td>
              <td>{entry.kind}</td>
              <td>{entry.credits > 0 ? `+${entry.credits}` : entry.credits}</td>
              <td>{entry.balanceAfter}</td>
              <td>{entry.projectName ?? entry.projectId ?? ""}</td>
            </tr>
          ))}
        </tbody>
      </table>
    )}
  </section>
);

const NewSecret: FC<{ secret: string; name: string }> = ({ secret, name }) => (
  <div class="message" role="status">
    <p>
      Your new token <strong>{name}</strong>:
    </p>
    <p class="secret">{secret}</p>
    <p>Copy it now: it will not be shown again. Send it as Authorization: Bearer on /v1 and /mcp.</p>
  </div>
);

const Tokens: FC<{ view: AccountView; forms: AccountForms; secret?: { value: string; name: string } }> = ({ view, forms, secret }) => (
  <section>
    <h2>Personal API tokens</h2>
    <p class="muted">
      For scripts and for AI clients that take a header (Claude Code, Cursor, VS Code, the agent SDKs). A credit limit caps what the work a token sends may spend; leave it empty
      for none.
    </p>
    {secret ? <NewSecret secret={secret.value} name={secret.name} /> : null}
    {view.tokens.length === 0 ? (
      <p class="muted">You have no tokens.</p>
    ) : (
      <table>
        <thead>
          <tr>
            <th>Name</th>
            <th>Prefix</th>
            <th>Scopes</th>
            <th>Created</th>
            <th>Expires</th>
            <th>Last used</th>
            <th>Credits</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {view.tokens.map((token) => (
            <tr>
              <td>{token.name}</td>
              <td>
                <code>{token.prefix}…</code>
              </td>
              <td>{token.scopes.join(", ")}</td>
              <td>{when(token.createdAt)}</td>
              <td>{when(token.expiresAt)}</td>
              <td>{when(token.lastUsedAt)}</td>
              <td>
                <CreditLimitCell action={`/account/tokens/${token.id}/limit`} csrf={forms.limitToken.get(token.id)!} {...token} />
              </td>
              <td>
                <RevokeButton action={`/account/tokens/${token.id}/revoke`} csrf={forms.revokeToken.get(token.id)!} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    )}
    <h3>Create a token</h3>
    <form method="post" action="/account/tokens">
      <input type="hidden" name="nonce" value={forms.create.nonce} />
      <input type="hidden" name="csrf" value={forms.create.csrf} />
      <label>
        Name
        <input type="text" name="name" maxlength={100} required />
      </label>
      {SCOPES.map((scope) => (
        <label>
          <input type="checkbox" name="scope" value={scope} checked /> <code>{scope}</code>: {SCOPE_SENTENCES[scope]}
        </label>
      ))}
      <label>
        Expires in
        <select name="days">
          {TOKEN_DAYS.map((days) => (
            <option value={String(days)}>{days} days</option>
          ))}
        </select>
      </label>
      <button type="submit">Create token</button>
    </form>
  </section>
);

const Apps: FC<{ view: AccountView; forms: AccountForms }> = ({ view, forms }) => (
  <section>
    <h2>Connected apps</h2>
    <p class="muted">Apps you approved through OAuth, such as ChatGPT or Claude connectors. Revoking one stops it at once.</p>
    {view.apps.length === 0 ? (
      <p class="muted">No apps are connected.</p>
    ) : (
      <table>
        <thead>
          <tr>
            <th>App</th>
            <th>Scopes</th>
            <th>Connected</th>
            <th>Last used</th>
            <th>Credits</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {view.apps.map((app) => (
            <tr>
              <td>{app.clientName}</td>
              <td>{app.scopes.join(", ")}</td>
              <td>{when(app.createdAt)}</td>
              <td>{when(app.lastUsedAt)}</td>
              <td>
                <CreditLimitCell action={`/account/apps/${app.id}/limit`} csrf={forms.limitApp.get(app.id)!} {...app} />
              </td>
              <td>
                <RevokeButton action={`/account/apps/${app.id}/revoke`} csrf={forms.revokeApp.get(app.id)!} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    )}
  </section>
);

/** The account page of a signed-in person: credits, tokens, connected apps, sign out; a message above them when there is one. */
export const AccountPage: FC<{ view: AccountView; forms: AccountForms; message?: { text: string; problem: boolean }; secret?: { value: string; name: string } }> = ({
  view,
  forms,
  message,
  secret,
}) => (
  <>
    <h1>Your account</h1>
    <p>
      Signed in as <strong>{view.email}</strong>.
    </p>
    <form method="post" action="/account/sign-out">
      <input type="hidden" name="csrf" value={forms.signOut} />
      <button type="submit">Sign out</button>
    </form>
    <Message text={message?.text} problem={message?.problem} />
    <Credits view={view} />
    <Tokens view={view} forms={forms} secret={secret} />
    <Apps view={view} forms={forms} />
  </>
);
