import type { components } from "./generated/api.ts";
import { type ClientOptions, Http } from "./http.ts";

type Schemas = components["schemas"];
export type ApiTokenItem = Schemas["ApiTokenItem"];
export type CreatedApiToken = Schemas["CreatedApiToken"];
export type Scope = ApiTokenItem["scopes"][number];

/** A signed-in account (its session token): personal API tokens, and signing out. */
export class AccountClient {
  readonly session: string;
  readonly tokens: {
    /** A personal API token; its secret (`token`) is in this answer only. */
    create(input: { name: string; scopes: Scope[]; expiresAt: string }): Promise<CreatedApiToken>;
    list(): Promise<ApiTokenItem[]>;
    revoke(tokenId: string): Promise<void>;
  };
  private readonly http: Http;

  constructor(options: ClientOptions & { session: string }) {
    this.session = options.session;
    const http = (this.http = new Http(options, options.session));
    this.tokens = {
      // Not repeated after a network error: a second try would make a second token.
      create: async (input) => (await http.request<CreatedApiToken>("POST", "/auth/api-tokens", { body: input, repeatable: false })).body,
      list: async () => (await http.request<{ items: ApiTokenItem[] }>("GET", "/auth/api-tokens", { repeatable: true })).body.items,
      revoke: async (tokenId) => void (await http.request("DELETE", `/auth/api-tokens/${encodeURIComponent(tokenId)}`, { repeatable: true })),
    };
  }

  /** Signs in with email and password: the account session. */
  static async signIn(options: ClientOptions & { email: string; password: string }): Promise<AccountClient> {
    const http = new Http(options);
    const { body } = await http.request<Schemas["SessionToken"]>("POST", "/auth/token", { body: { email: options.email, password: options.password }, repeatable: false });
    return new AccountClient({ ...options, session: body.token });
  }

  /** Ends this session (its API tokens stay valid). */
  async signOut(): Promise<void> {
    await this.http.request("DELETE", "/auth/token", { repeatable: true });
  }
}
